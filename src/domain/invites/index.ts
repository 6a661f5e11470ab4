// Invites (C3.5): outbox, suppression list, SMTP delivery.
export {
  queueMessages,
  listOutbox,
  requeueMessage,
  suppressEmail,
  messageByUnsubscribeToken,
  isSuppressed,
  unsubscribeUrl,
  redactLinks,
  isTransactional,
  TRANSACTIONAL_KINDS,
  OUTBOX_DUE,
} from './outbox.ts';
export { deliverOutbox, classifySmtpError, retryDelayMs, MAX_ATTEMPTS, RETRY_FOR_MS, type DeliveryRun } from './deliver.ts';
export { listSuppressions, removeSuppression } from './suppressions.ts';
export { createMailer, SMTP_TIMEOUTS, type Mailer } from './mailer.ts';
