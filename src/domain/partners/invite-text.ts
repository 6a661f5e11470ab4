// C3.5: the invite e-mail with the claim link (Dutch first, English below: the row carries no locale). The
// operator's footer is added where every e-mail is queued (invites/outbox.ts, C7.3).
import type { Deps } from '../../deps.ts';
import { unsubscribeUrl } from '../invites/outbox.ts';
import { endSentence } from '../../lib/operator.ts';

// Control characters (C0, DEL, C1), the line and paragraph separators, and the invisible format characters a
// mail client renders as nothing or as a change of direction: the bidi embeddings, overrides and isolates
// (U+202A–U+202E, U+2066–U+2069), the marks U+200E, U+200F, U+061C, zero-width and soft-hyphen characters. The
// joiners U+200C and U+200D stay: names in several scripts and emoji need them. A line break becomes a space, an
// invisible character goes.
const BREAKS = /[\p{Cc}\p{Zl}\p{Zp}]/gu;
const INVISIBLE = /(?![\u200C\u200D])\p{Cf}/gu;

/** Text a partner sent, as it may appear in mail: no characters that hide or reorder what is shown (D211). */
export function mailText(raw: string): string {
  return raw.replace(BREAKS, ' ').replace(INVISIBLE, '').replace(/\s+/g, ' ').trim();
}

// What a mail client may turn into a link: a scheme (`https://`, `mailto:`-style addresses with `@`), angle
// brackets (`<https://…>` is the plain-text form of a link), `www.`, or a dotted name whose last label is letters
// (`evil.example`, `klant.nl`): clients linkify bare host names of known top-level domains, a list we cannot keep.
const LINKISH = /:\/\/|[<>@]|www\.|[\p{L}\p{N}-]\.\p{L}{2,}/iu;

/**
 * The customer's name as the invite greets them (D211): a name that could show a link not the service's (a
 * partner's field holding "Jan <https://evil.example/claim>") or nothing at all is not used; the mail greets the
 * customer without it. The draft keeps the name as sent; only the mail leaves it out.
 */
export function greetingName(name: string): string | null {
  const shown = mailText(name);
  return shown && !LINKISH.test(shown.replace(/[\u200C\u200D]/g, '')) ? shown : null;
}

export function inviteMessage(
  deps: Deps,
  m: { name: string; partnerName: string; claimUrl: string; unsubscribeToken: string },
): { subject: string; body: string } {
  const operator = deps.config.OPERATOR_NAME;
  const name = greetingName(m.name);
  // the partner's name is set by the operator, but a stray control character still must not reorder the mail
  const partnerName = mailText(m.partnerName);
  const subject = `${partnerName}: bevestig uw aanmelding bij ${operator}`;
  const body = [
    name ? `Beste ${name},` : 'Beste klant,',
    '',
    `${partnerName} heeft u aangemeld bij ${operator} om uw laadsessies te laten registreren als emissiereductie-eenheden (ERE).`,
    'Controleer en bevestig uw gegevens via deze link:',
    '',
    m.claimUrl,
    '',
    'Daarna ondertekent u de machtiging.',
    '',
    `${name ? `Dear ${name}` : 'Dear customer'}, ${endSentence(`${partnerName} pre-registered you with ${operator}`)} Review and confirm your details at the link above: ${m.claimUrl}?locale=en`,
    '',
    `Geen e-mail meer ontvangen? / Unsubscribe: ${unsubscribeUrl(deps, m.unsubscribeToken)}`,
  ].join('\n');
  return { subject, body };
}
