// Errors are data (ARCHITECTURE.md): a DomainError's code is the specification's error string.
// The HTTP edge maps code → status in src/http/errors.ts; the OCPP edge maps it to a CALLERROR.
export class DomainError extends Error {
  constructor(
    public readonly code: string,
    public readonly detail?: string,
    /** extra top-level fields for the error body, e.g. { required_scope } */
    public readonly extra?: Record<string, unknown>,
  ) {
    super(detail ? `${code}: ${detail}` : code);
    this.name = 'DomainError';
  }
}

export const isDomainError = (e: unknown): e is DomainError => e instanceof DomainError;
