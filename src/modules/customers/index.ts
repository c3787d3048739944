import type { ChargesService } from '../billing/index.ts'
import type { Module } from '../module.ts'
import type { NotificationsService } from '../notifications/index.ts'
import type { SubscriptionService } from '../subscriptions/index.ts'
import { SubscriberDetail, SubscriberPaymentInstrument, SubscriberShippingAddress } from './customer.schemas.ts'
import { customerAdminRoutes } from './customers.routes.ts'
import { createCustomersService, type CustomersService } from './customers.service.ts'

export interface CustomersModuleDeps {
  subscriptions: SubscriptionService
  charges: ChargesService
  notifications: NotificationsService
}

/**
 * The merchant's view of one subscriber across modules (GET /api/v1/admin/subscribers/{id}): their
 * subscriptions, addresses and instruments (subscriptions), charges (billing) and emails
 * (notifications), read through each module's service. It owns no table and writes nothing.
 */
export function createCustomersModule({ subscriptions, charges, notifications }: CustomersModuleDeps): Module<CustomersService> {
  const service = createCustomersService({ subscriptions, charges, notifications })
  return {
    name: 'customers',
    service,
    routes: { admin: (app) => customerAdminRoutes(app, service) },
    schemas: [SubscriberShippingAddress, SubscriberPaymentInstrument, SubscriberDetail],
  }
}

export type { CustomersService } from './customers.service.ts'
export { SubscriberDetail, type SubscriberDetailView } from './customer.schemas.ts'
