// C3.5: the invite e-mail with the claim link (Dutch first, English below: the row carries no locale). The
// operator's footer is added where every e-mail is queued (invites/outbox.ts, C7.3).
import type { Deps } from '../../deps.ts';
import { unsubscribeUrl } from '../invites/outbox.ts';
import { endSentence } from '../../lib/operator.ts';

export function inviteMessage(
  deps: Deps,
  m: { name: string; partnerName: string; claimUrl: string; unsubscribeToken: string },
): { subject: string; body: string } {
  const operator = deps.config.OPERATOR_NAME;
  const subject = `${m.partnerName}: bevestig uw aanmelding bij ${operator}`;
  const body = [
    `Beste ${m.name},`,
    '',
    `${m.partnerName} heeft u aangemeld bij ${operator} om uw laadsessies te laten registreren als emissiereductie-eenheden (ERE).`,
    'Controleer en bevestig uw gegevens via deze link:',
    '',
    m.claimUrl,
    '',
    'Daarna ondertekent u de machtiging.',
    '',
    `Dear ${m.name}, ${endSentence(`${m.partnerName} pre-registered you with ${operator}`)} Review and confirm your details at the link above: ${m.claimUrl}?locale=en`,
    '',
    `Geen e-mail meer ontvangen? / Unsubscribe: ${unsubscribeUrl(deps, m.unsubscribeToken)}`,
  ].join('\n');
  return { subject, body };
}
