export { Charge, CHARGE_STATUSES, type ChargeView } from './charge.schemas.ts'
export { presentCharge } from './charge.presenter.ts'
export { listChargesOfSubscription } from './charges.repository.ts'
