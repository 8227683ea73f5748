/**
 * The webhooks door: registrations and the events delivered to them (webhooks/), their recent
 * deliveries and test events, and the delivery receipts the service posts back. Clients (http/,
 * cli/) reach a domain only through its door in core/ (eslint.config.mjs).
 */
export { createWebhook, enableWebhook, getWebhook, listWebhooks, pageWebhooks, removeWebhook } from '../webhooks/store';
export { recordReceipt } from '../webhooks/receipts';
export { RECENT_DELIVERIES, recentDeliveries, sendTestEvent } from '../webhooks/deliveries';
