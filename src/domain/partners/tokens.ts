// Claim links (C3.4): an unguessable random token (192 bits) of which only the SHA-256 is stored.
import crypto from 'node:crypto';
import type { Deps } from '../../deps.ts';

export const newClaimToken = (): string => crypto.randomBytes(24).toString('base64url');

export const claimUrl = (deps: Deps, token: string): string => `${deps.config.PUBLIC_BASE_URL}/claim/${token}`;

/** A token of the shape we hand out (anything else is "unknown" without a database lookup). */
export const looksLikeClaimToken = (token: string): boolean => /^[A-Za-z0-9_-]{32}$/.test(token);
