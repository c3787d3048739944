export { ApplicableRetentionOffers, CancellationReasons, RetentionOffers } from './retention.schemas.ts'
export { checkRetentionSettings, retentionSettingsUpdate } from './retention-settings.ts'
export { createRetentionService, recordRetentionSave, type ApplyDiscount, type RetentionService } from './retention.service.ts'
export { retentionPortalRoutes } from './retention.routes.ts'
