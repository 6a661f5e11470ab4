// C7.3 the operator's identity, shown in the footer of every page and e-mail: name, address, KvK number, support
// e-mail and privacy page (OPERATOR_* in src/config.ts). The sandbox fills what is unset with demo values that look
// like a company's but are plainly examples (a "Voorbeeld" street, an .example domain); production shows only what
// was configured, never a demo value to a real customer.
import type { Config } from '../config.ts';

export interface OperatorIdentity {
  name: string;
  address: string | null;
  kvk: string | null;
  supportEmail: string | null;
  privacyUrl: string | null;
}

export const DEMO_OPERATOR = {
  address: 'Voorbeeldkade 1, 1011 AB Amsterdam',
  kvk: '12345678',
  supportEmail: 'support@ere-gateway.example',
  privacyUrl: 'https://ere-gateway.example/privacy',
} as const;

type OperatorConfig = Pick<Config, 'APP_ENV' | 'OPERATOR_NAME' | 'OPERATOR_ADDRESS' | 'OPERATOR_KVK' | 'OPERATOR_SUPPORT_EMAIL' | 'OPERATOR_PRIVACY_URL'>;

export function operatorOf(config: OperatorConfig): OperatorIdentity {
  const demo = config.APP_ENV === 'sandbox';
  return {
    name: config.OPERATOR_NAME,
    address: config.OPERATOR_ADDRESS ?? (demo ? DEMO_OPERATOR.address : null),
    kvk: config.OPERATOR_KVK ?? (demo ? DEMO_OPERATOR.kvk : null),
    supportEmail: config.OPERATOR_SUPPORT_EMAIL ?? (demo ? DEMO_OPERATOR.supportEmail : null),
    privacyUrl: config.OPERATOR_PRIVACY_URL ?? (demo ? DEMO_OPERATOR.privacyUrl : null),
  };
}

/**
 * A sentence that ends with `text`: one period after it, none added when it ends with one already
 * ("ERE Gateway B.V." stays, never "B.V..").
 */
export function endSentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** The e-mail footer (plain text, Dutch and English in one, as the invite is): who sends it and how to reach them. */
export function operatorFooterText(op: OperatorIdentity): string {
  const who = [op.name, op.address, op.kvk ? `KvK ${op.kvk}` : null].filter(Boolean).join(', ');
  return [
    '-- ',
    who,
    ...(op.supportEmail ? [`Vragen / Questions: ${op.supportEmail}`] : []),
    ...(op.privacyUrl ? [`Privacyverklaring / Privacy statement: ${op.privacyUrl}`] : []),
  ].join('\n');
}
