// C6.8: every timestamp the API (and the OCPP gateway) hands out is UTC 'YYYY-MM-DDTHH:mm:ssZ', no milliseconds.
export function isoUtc(d: Date | string): string {
  return new Date(d).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
