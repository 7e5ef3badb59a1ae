/** Documented delivery timing (GraphQL document, Limits); the emulator scales each by ctx.timeScale. */

/** Delay before the first attempt (R-LIMIT-07, R-WEBHOOK-DELIVERY-11). */
export const WEBHOOK_FIRST_DELAY_MS = 5_000
/** Timeout of one attempt (R-LIMIT-08, R-WEBHOOK-DELIVERY-12). */
export const WEBHOOK_TIMEOUT_MS = 7_000
/** Attempts per delivery (R-LIMIT-09, R-WEBHOOK-DELIVERY-17). */
export const WEBHOOK_ATTEMPTS = 5
/** The re-enable probe; outside the WebhookEvent enum (R-WEBHOOK-EVENT-07). */
export const WEBHOOK_HEALTH_CHECK_EVENT = "WEBHOOK_HEALTH_CHECK"
