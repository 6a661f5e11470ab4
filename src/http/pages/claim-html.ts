// Server-rendered HTML of the claim page (C3.4, C6.7) and the unsubscribe page (C3.5): no JavaScript,
// Dutch by default, English with locale=en.
import type { Draft } from '../../domain/partners/claim.ts';

export type Locale = 'nl' | 'en';

const esc = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const T = {
  nl: {
    title: 'Uw aanmelding bevestigen',
    intro: (p: string, op: string) => `${p} heeft u aangemeld bij ${op}. Controleer uw gegevens en bevestig de aanmelding; daarna ondertekent u de machtiging.`,
    name: 'Naam', email: 'E-mailadres', type: 'Soort', company: 'Bedrijf', kvk: 'KvK-nummer', btw: 'Btw-nummer',
    address: 'Adres', ean: 'EAN-code', charger: 'Laadpaal', chargerYes: 'gekoppeld door uw installateur',
    street: 'Straat', city: 'Plaats', pickEan: 'Kies uw EAN-code', enterEan: 'EAN-code (18 cijfers, optioneel)',
    eanUnknown: 'nog niet bekend', eanPending: 'wordt opgezocht',
    confirm: 'Aanmelding bevestigen',
    doneTitle: 'Uw account is aangemaakt',
    doneBody: 'Uw aanmelding is bevestigd en uw account is aangemaakt.',
    sign: 'Machtiging ondertekenen',
    noConnection: 'Zodra uw EAN-code en adres bekend zijn, kunt u de machtiging ondertekenen.',
    notFoundTitle: 'Link niet gevonden', notFoundBody: 'Deze link is onbekend of onvolledig. Controleer de link in uw e-mail.',
    claimedTitle: 'Al bevestigd', claimedBody: 'Deze aanmelding is al bevestigd. U hoeft niets meer te doen.',
    errors: {
      address_required: 'Vul de straat en plaats in.',
      invalid_ean: 'Deze EAN-code is ongeldig of hoort niet bij uw adres.',
      ean_in_use: 'Deze EAN-code is al geregistreerd.',
      ean_address_mismatch: 'Deze EAN-code hoort volgens het register niet bij uw adres.',
      ean_not_dutch: 'Deze EAN-code is geen Nederlandse aansluiting.',
    } as Record<string, string>,
    errorGeneric: 'Dit lukte niet. Controleer uw gegevens.',
    unsubTitle: 'Afmelden', unsubBody: (e: string) => `Geen e-mails meer van ons sturen naar ${e}?`, unsubButton: 'Afmelden',
    unsubDone: 'U bent afgemeld. U ontvangt geen e-mails meer van ons.',
    other: 'English',
  },
  en: {
    title: 'Confirm your registration',
    intro: (p: string, op: string) => `${p} pre-registered you with ${op}. Check your details and confirm; then you sign the authorisation (machtiging).`,
    name: 'Name', email: 'E-mail address', type: 'Type', company: 'Company', kvk: 'KvK number', btw: 'VAT number',
    address: 'Address', ean: 'EAN code', charger: 'Charger', chargerYes: 'coupled by your installer',
    street: 'Street', city: 'City', pickEan: 'Choose your EAN code', enterEan: 'EAN code (18 digits, optional)',
    eanUnknown: 'not known yet', eanPending: 'being looked up',
    confirm: 'Confirm registration',
    doneTitle: 'Your account has been created',
    doneBody: 'Your registration is confirmed and your account has been created.',
    sign: 'Sign the authorisation',
    noConnection: 'Once your EAN code and address are known you can sign the authorisation.',
    notFoundTitle: 'Link not found', notFoundBody: 'This link is unknown or incomplete. Check the link in your e-mail.',
    claimedTitle: 'Already confirmed', claimedBody: 'This registration has already been confirmed. Nothing else is needed.',
    errors: {
      address_required: 'Enter the street and city.',
      invalid_ean: 'This EAN code is invalid or does not belong to your address.',
      ean_in_use: 'This EAN code is already registered.',
      ean_address_mismatch: 'According to the register this EAN code does not belong to your address.',
      ean_not_dutch: 'This EAN code is not a Dutch connection.',
    } as Record<string, string>,
    errorGeneric: 'That did not work. Check your details.',
    unsubTitle: 'Unsubscribe', unsubBody: (e: string) => `Stop sending e-mail to ${e}?`, unsubButton: 'Unsubscribe',
    unsubDone: 'You have been unsubscribed. You will not receive e-mail from us again.',
    other: 'Nederlands',
  },
};

function layout(lc: Locale, title: string, body: string, otherHref?: string): string {
  const switcher = otherHref ? `<p class="lang"><a href="${esc(otherHref)}" hreflang="${lc === 'nl' ? 'en' : 'nl'}">${T[lc].other}</a></p>` : '';
  return `<!doctype html>
<html lang="${lc}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${esc(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#222}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}dt{font-weight:600}label{display:block;margin:.8rem 0 .2rem}
input,select{font-size:1rem;padding:.3rem;width:100%;max-width:24rem}button,.button{font-size:1rem;padding:.5rem 1rem;margin-top:1rem}
.error{color:#a00;font-weight:600}.lang{float:right}</style></head>
<body>${switcher}<h1>${esc(title)}</h1>${body}</body></html>`;
}

export function messagePage(lc: Locale, kind: 'not_found' | 'claimed'): string {
  const t = T[lc];
  return kind === 'not_found'
    ? layout(lc, t.notFoundTitle, `<p id="message">${t.notFoundBody}</p>`)
    : layout(lc, t.claimedTitle, `<p id="message">${t.claimedBody}</p>`);
}

function addressOf(d: Draft): string | null {
  if (!d.postal_code || !d.house_number) return null;
  const num = d.house_number + (d.house_number_addition ? ` ${d.house_number_addition}` : '');
  return `${num}, ${d.postal_code}${d.city ? ` ${d.city}` : ''}`;
}

export interface FormState {
  action: string;
  otherHref: string;
  operator: string;
  locale: Locale;
  errorCode?: string;
  street?: string;
  city?: string;
}

export function claimFormPage(d: Draft, s: FormState): string {
  const t = T[s.locale];
  const row = (k: string, v: string | null | undefined, id: string) => (v ? `<dt>${k}</dt><dd id="${id}">${esc(v)}</dd>` : '');
  const address = addressOf(d);
  const eanText =
    d.ean_code ?? (d.ean_status === 'pending' ? t.eanPending : d.ean_status === 'candidates' ? null : t.eanUnknown);
  const details = `<dl>${row(t.name, d.name, 'draft-name')}${row(t.email, d.email, 'draft-email')}${row(t.type, d.type, 'draft-type')}
${row(t.company, d.company_name, 'draft-company')}${row(t.kvk, d.kvk, 'draft-kvk')}${row(t.btw, d.btw, 'draft-btw')}
${row(t.address, address, 'draft-address')}${row(t.ean, eanText, 'draft-ean')}${d.charger_id ? row(t.charger, t.chargerYes, 'draft-charger') : ''}</dl>`;

  let fields = '';
  if (address) {
    fields += `<label for="street">${t.street}</label><input id="street" name="street" autocomplete="address-line1" maxlength="120" value="${esc(s.street ?? '')}"${d.ean_code ? ' required' : ''}>`;
    fields += `<label for="city">${t.city}</label><input id="city" name="city" autocomplete="address-level2" maxlength="120" value="${esc(s.city ?? d.city ?? '')}"${d.ean_code ? ' required' : ''}>`;
    if (!d.ean_code && d.ean_status === 'candidates') {
      const opts = d.ean_candidates.map((e) => `<option value="${esc(e)}">${esc(e)}</option>`).join('');
      fields += `<label for="ean">${t.pickEan}</label><select id="ean" name="ean">${opts}</select>`;
    } else if (!d.ean_code) {
      fields += `<label for="ean">${t.enterEan}</label><input id="ean" name="ean" inputmode="numeric" pattern="[0-9 ]{18,24}">`;
    }
  }
  const error = s.errorCode ? `<p class="error" id="error" role="alert">${esc(t.errors[s.errorCode] ?? t.errorGeneric)}</p>` : '';
  const body = `<p>${esc(t.intro(d.partner_name, s.operator))}</p>${details}${error}
<form method="post" action="${esc(s.action)}"><input type="hidden" name="locale" value="${s.locale}">${fields}
<button type="submit" id="confirm">${t.confirm}</button></form>`;
  return layout(s.locale, t.title, body, s.otherHref);
}

export function claimDonePage(lc: Locale, mandateUrl: string | null): string {
  const t = T[lc];
  const next = mandateUrl
    ? `<p><a class="button" id="sign" href="${esc(mandateUrl)}">${t.sign}</a></p>`
    : `<p id="no-connection">${t.noConnection}</p>`;
  return layout(lc, t.doneTitle, `<p id="message">${t.doneBody}</p>${next}`);
}

export function unsubscribePage(lc: Locale, email: string, action: string): string {
  const t = T[lc];
  return layout(lc, t.unsubTitle, `<p>${esc(t.unsubBody(email))}</p><form method="post" action="${esc(action)}"><button type="submit" id="unsubscribe">${t.unsubButton}</button></form>`);
}

export function unsubscribedPage(lc: Locale): string {
  return layout(lc, T[lc].unsubTitle, `<p id="message">${T[lc].unsubDone}</p>`);
}

export function unsubscribeNotFoundPage(lc: Locale): string {
  return layout(lc, T[lc].notFoundTitle, `<p id="message">${T[lc].notFoundBody}</p>`);
}
