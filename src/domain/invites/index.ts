// Invites (C3.5): outbox, suppression list, SMTP delivery.
export { queueMessages, listOutbox, suppressEmail, messageByUnsubscribeToken, isSuppressed, unsubscribeUrl } from './outbox.ts';
export { deliverOutbox, MAX_ATTEMPTS, type DeliveryRun } from './deliver.ts';
export { listSuppressions, removeSuppression } from './suppressions.ts';
export { createMailer, type Mailer } from './mailer.ts';
