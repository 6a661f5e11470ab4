// Shared zod pieces of the onboarding routes (error bodies, enums).
import { z } from 'zod';
import { ErrorBody } from './common.ts';

export { ErrorBody };
export const AccountTypeEnum = z.enum(['particulier', 'zakelijk', 'vve']);
export const PayoutHandlerEnum = z.enum(['joulo_pays_customer', 'via_cpo_invoicing']);
export const EanValidationEnum = z.enum(['matched', 'mismatched', 'unverified']);
export const MandateStatusEnum = z.enum(['pending', 'active']);
export const RegistrationStatusEnum = z.enum(['concept', 'ingediend']);
export const Timestamp = z.string().describe('UTC timestamp YYYY-MM-DDTHH:mm:ssZ');

/** A documented error body for one status, with the codes it can carry. */
export const errorOf = (...codes: string[]) => ErrorBody.describe(`error: ${codes.join(' | ')}`);
