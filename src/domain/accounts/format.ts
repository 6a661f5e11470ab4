// Output helpers of the onboarding area. C6.8: timestamps leave the API as UTC YYYY-MM-DDTHH:mm:ssZ.
import { isoUtc as isoSeconds } from '../../lib/time.ts';

export { isoSeconds };
export const isoOrNull = (d: Date | string | null | undefined): string | null => (d ? isoSeconds(d) : null);

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (v: unknown): v is string => typeof v === 'string' && UUID_RE.test(v);
