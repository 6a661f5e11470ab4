// Server-rendered HTML of the claim page (C3.4, C6.7) and the unsubscribe page (C3.5): no JavaScript, Dutch by
// default, English with locale=en, every value translated. The signing page's stylesheet and operator footer
// (page-kit.ts, C7.3). Issue 14 item 5: a draft without an address asks for it, and the page after confirming says
// what is still to do (the machtiging to sign, with its link) instead of "nothing more to do".
import type { Draft, NextStep } from '../../domain/partners/claim.ts';
import { endSentence, type OperatorIdentity } from '../../lib/operator.ts';
import { esc, pageHtml } from './page-kit.ts';

export type Locale = 'nl' | 'en';

const T = {
  nl: {
    title: 'Uw aanmelding bevestigen',
    intro: (p: string, op: string) => `${endSentence(`${p} heeft u aangemeld bij ${op}`)} Controleer uw gegevens en bevestig de aanmelding; daarna ondertekent u de machtiging.`,
    name: 'Naam', email: 'E-mailadres', type: 'Soort', company: 'Bedrijf', kvk: 'KvK-nummer', btw: 'Btw-nummer',
    address: 'Adres', ean: 'EAN-code', charger: 'Laadpaal', chargerYes: 'gekoppeld door uw installateur',
    types: { particulier: 'particulier', zakelijk: 'zakelijk', vve: 'VvE (vereniging van eigenaren)' } as Record<string, string>,
    askAddress: 'We hebben het adres van uw aansluiting nog niet. Vul het adres in waar de laadpaal staat.',
    postalCode: 'Postcode', houseNumber: 'Huisnummer', addition: 'Toevoeging (optioneel)',
    street: 'Straat', city: 'Plaats', pickEan: 'Kies uw EAN-code', enterEan: 'EAN-code (18 cijfers, staat op uw energierekening)',
    eanUnknown: 'nog niet bekend', eanPending: 'wordt opgezocht', eanChoose: 'kies hieronder',
    iban: 'IBAN (rekening voor de uitbetaling)',
    ibanHint: 'Zonder IBAN kunnen we uw laadenergie niet als ERE registreren en niets uitbetalen.',
    confirm: 'Aanmelding bevestigen',
    doneTitle: 'Uw account is aangemaakt',
    doneBody: 'Uw aanmelding is bevestigd en uw account is aangemaakt.',
    signTitle: 'Nog één stap: de machtiging ondertekenen',
    signBody: 'De machtiging is nog niet ondertekend. Zonder machtiging kunnen we de laadenergie van uw aansluiting niet als ERE registreren.',
    sign: 'Machtiging ondertekenen',
    signed: 'De machtiging is ondertekend. U hoeft niets meer te doen.',
    contact: (mail: string | null) =>
      `De machtiging kan nog niet worden ondertekend. ${mail ? `Mail ons op ${mail}, dan helpen we u verder.` : 'Neem contact met ons op, dan helpen we u verder.'}`,
    notFoundTitle: 'Link niet gevonden', notFoundBody: 'Deze link is onbekend of onvolledig. Controleer de link in uw e-mail.',
    claimedTitle: 'Al bevestigd', claimedBody: 'Deze aanmelding is al bevestigd.',
    confirmSentTitle: 'Bevestig via uw e-mail',
    confirmSentBody: 'Er bestaat al een account met dit e-mailadres. We hebben er een bericht naartoe gestuurd: open de link daarin om deze aanmelding aan uw account toe te voegen.',
    errors: {
      address_required: 'Vul het adres volledig in.',
      invalid_postal_code: 'Deze postcode is ongeldig; schrijf haar als 1234 AB.',
      invalid_house_number: 'Dit huisnummer is ongeldig; schrijf het als 12, 12A of 12-2.',
      invalid_ean: 'Deze EAN-code is ongeldig of hoort niet bij uw adres.',
      ean_required: 'Vul uw EAN-code in: zonder EAN-code kunt u de machtiging niet ondertekenen.',
      ean_choose: 'Op dit adres zijn meerdere aansluitingen. Kies uw EAN-code.',
      ean_in_use: 'Deze EAN-code is al geregistreerd.',
      claim_confirm_required: 'Er is intussen een account met dit e-mailadres aangemaakt. Bevestig de aanmelding opnieuw.',
      ean_address_mismatch: 'Deze EAN-code hoort volgens het register niet bij uw adres.',
      ean_not_dutch: 'Deze EAN-code is geen Nederlandse aansluiting.',
      invalid_iban: 'Dit IBAN is ongeldig: 15 tot 34 letters en cijfers, zoals NL91 ABNA 0417 1643 00.',
    } as Record<string, string>,
    errorGeneric: 'Dit lukte niet. Controleer uw gegevens.',
    unsubTitle: 'Afmelden', unsubBody: (e: string) => `Geen e-mails meer van ons sturen naar ${e}?`, unsubButton: 'Afmelden',
    unsubDone: 'U bent afgemeld. U ontvangt geen e-mails meer van ons.',
    other: 'English',
    errorTitle: (title: string) => `Fout: ${title}`,
  },
  en: {
    title: 'Confirm your registration',
    intro: (p: string, op: string) => `${endSentence(`${p} pre-registered you with ${op}`)} Check your details and confirm; then you sign the authorisation (machtiging).`,
    name: 'Name', email: 'E-mail address', type: 'Type', company: 'Company', kvk: 'KvK number (Chamber of Commerce)', btw: 'VAT number',
    address: 'Address', ean: 'EAN code', charger: 'Charger', chargerYes: 'coupled by your installer',
    types: { particulier: 'private', zakelijk: 'business', vve: "homeowners' association (VvE)" } as Record<string, string>,
    askAddress: 'We do not have the address of your connection yet. Enter the address where the charger is.',
    postalCode: 'Postal code', houseNumber: 'House number', addition: 'Addition (optional)',
    street: 'Street', city: 'City', pickEan: 'Choose your EAN code', enterEan: 'EAN code (18 digits, on your energy bill)',
    eanUnknown: 'not known yet', eanPending: 'being looked up', eanChoose: 'choose below',
    iban: 'IBAN (account for the payout)',
    ibanHint: 'Without an IBAN we cannot register your charging energy as ERE or pay anything out.',
    confirm: 'Confirm registration',
    doneTitle: 'Your account has been created',
    doneBody: 'Your registration is confirmed and your account has been created.',
    signTitle: 'One more step: sign the authorisation',
    signBody: 'The authorisation (machtiging) is not signed yet. Without it we cannot register the charging energy of your connection as ERE.',
    sign: 'Sign the authorisation',
    signed: 'The authorisation is signed. Nothing else is needed.',
    contact: (mail: string | null) =>
      `The authorisation cannot be signed yet. ${mail ? `E-mail us at ${mail} and we will help you further.` : 'Contact us and we will help you further.'}`,
    notFoundTitle: 'Link not found', notFoundBody: 'This link is unknown or incomplete. Check the link in your e-mail.',
    claimedTitle: 'Already confirmed', claimedBody: 'This registration has already been confirmed.',
    confirmSentTitle: 'Confirm through your e-mail',
    confirmSentBody: 'An account with this e-mail address already exists. We have sent a message to it: open the link in it to add this registration to your account.',
    errors: {
      address_required: 'Fill in the full address.',
      invalid_postal_code: 'This postal code is not valid; write it as 1234 AB.',
      invalid_house_number: 'This house number is not valid; write it as 12, 12A or 12-2.',
      invalid_ean: 'This EAN code is invalid or does not belong to your address.',
      ean_required: 'Enter your EAN code: without it you cannot sign the authorisation.',
      ean_choose: 'There are several connections at this address. Choose your EAN code.',
      ean_in_use: 'This EAN code is already registered.',
      claim_confirm_required: 'An account with this e-mail address was created meanwhile. Confirm the registration again.',
      ean_address_mismatch: 'According to the register this EAN code does not belong to your address.',
      ean_not_dutch: 'This EAN code is not a Dutch connection.',
      invalid_iban: 'This IBAN is not valid: 15 to 34 letters and digits, such as NL91 ABNA 0417 1643 00.',
    } as Record<string, string>,
    errorGeneric: 'That did not work. Check your details.',
    unsubTitle: 'Unsubscribe', unsubBody: (e: string) => `Stop sending e-mail to ${e}?`, unsubButton: 'Unsubscribe',
    unsubDone: 'You have been unsubscribed. You will not receive e-mail from us again.',
    other: 'Nederlands',
    errorTitle: (title: string) => `Error: ${title}`,
  },
};

/** `docTitle`: the page's <title> when it is not the heading (D241: "Fout: …" on a form with an error) */
function layout(lc: Locale, title: string, body: string, op: OperatorIdentity, otherHref?: string, docTitle = title): string {
  // D241: the link to the other language is read in that language (lang), besides saying where it leads (hreflang)
  const other = lc === 'nl' ? 'en' : 'nl';
  const switcher = otherHref ? `<p class="lang"><a href="${esc(otherHref)}" lang="${other}" hreflang="${other}">${T[lc].other}</a></p>` : '';
  return pageHtml(lc, docTitle, `${switcher}<h1>${esc(title)}</h1>${body}`, op);
}

/** issue 14 item 5: the next step, told as it is. */
function nextStepHtml(lc: Locale, next: NextStep, op: OperatorIdentity): string {
  const t = T[lc];
  switch (next.kind) {
    case 'sign':
      return `<section class="next" id="next-sign"><h2>${t.signTitle}</h2><p>${t.signBody}</p><p><a class="button" id="sign" href="${esc(next.url)}">${t.sign}</a></p></section>`;
    case 'signed':
      return `<p class="next" id="next-signed">${t.signed}</p>`;
    case 'contact':
      return `<p class="next" id="next-contact">${esc(t.contact(op.supportEmail))}</p>`;
  }
}

export function messagePage(lc: Locale, kind: 'not_found' | 'claimed' | 'confirm_sent', op: OperatorIdentity, next?: NextStep): string {
  const t = T[lc];
  if (kind === 'confirm_sent') return layout(lc, t.confirmSentTitle, `<p id="message">${t.confirmSentBody}</p>`, op);
  return kind === 'not_found'
    ? layout(lc, t.notFoundTitle, `<p id="message">${t.notFoundBody}</p>`, op)
    : layout(lc, t.claimedTitle, `<p id="message">${t.claimedBody}</p>${next ? nextStepHtml(lc, next, op) : ''}`, op);
}

function addressOf(d: Draft): string | null {
  if (!d.postal_code || !d.house_number) return null;
  const num = d.house_number + (d.house_number_addition ? ` ${d.house_number_addition}` : '');
  return `${num}, ${d.postal_code}${d.city ? ` ${d.city}` : ''}`;
}

export interface FormState {
  action: string;
  otherHref: string;
  op: OperatorIdentity;
  locale: Locale;
  errorCode?: string;
  street?: string;
  city?: string;
  postal_code?: string;
  house_number?: string;
  house_number_addition?: string;
  /** EANs the register lists at the address the customer entered */
  eanCandidates?: string[];
  /** D160: each candidate's house number and addition as the register lists it, shown beside the EAN */
  eanLabels?: Record<string, string>;
  /** D129: the confirmation code of an existing user's e-mailed link, sent back with the form */
  confirm?: string;
  /** D241: the EAN the customer typed or picked, shown again with the error (the IBAN never is) */
  ean?: string;
}

/** D241: the form fields an error code is about (the address: the ones left empty); none for the others */
const EAN_CODES = new Set(['invalid_ean', 'ean_required', 'ean_choose', 'ean_in_use', 'ean_address_mismatch', 'ean_not_dutch']);
function fieldsInError(s: FormState, cityShown: string): Set<string> {
  switch (s.errorCode) {
    case undefined:
      return new Set();
    case 'invalid_iban':
      return new Set(['iban']);
    case 'invalid_postal_code':
      return new Set(['postal_code']);
    case 'invalid_house_number':
      return new Set(['house_number']);
    case 'address_required': {
      const values: Record<string, string | undefined> = { postal_code: s.postal_code, house_number: s.house_number, street: s.street, city: cityShown };
      return new Set(Object.keys(values).filter((k) => !values[k]?.trim()));
    }
    default:
      return EAN_CODES.has(s.errorCode) ? new Set(['ean']) : new Set();
  }
}

/** D241: a field in error is marked (aria-invalid) and described by the error message (#error) before its own hint */
const input = (id: string, label: string, value: string, attrs: string, errors: Set<string>, hint?: string) => {
  const describedBy = [errors.has(id) ? 'error' : null, hint ?? null].filter(Boolean).join(' ');
  const aria = `${errors.has(id) ? ' aria-invalid="true"' : ''}${describedBy ? ` aria-describedby="${describedBy}"` : ''}`;
  return `<label for="${id}">${label}</label><input id="${id}" name="${id}" value="${esc(value)}" ${attrs}${aria}>`;
};

export function claimFormPage(d: Draft, s: FormState): string {
  const t = T[s.locale];
  const row = (k: string, v: string | null | undefined, id: string) => (v ? `<dt>${k}</dt><dd id="${id}">${esc(v)}</dd>` : '');
  const address = addressOf(d);
  const candidates = !d.ean_code && s.eanCandidates?.length ? s.eanCandidates : !d.ean_code && d.ean_status === 'candidates' ? d.ean_candidates : [];
  const eanText = d.ean_code ?? (candidates.length ? t.eanChoose : d.ean_status === 'pending' ? t.eanPending : t.eanUnknown);
  const details = `<dl>${row(t.name, d.name, 'draft-name')}${row(t.email, d.email, 'draft-email')}${row(t.type, t.types[d.type] ?? d.type, 'draft-type')}
${row(t.company, d.company_name, 'draft-company')}${row(t.kvk, d.kvk, 'draft-kvk')}${row(t.btw, d.btw, 'draft-btw')}
${row(t.address, address, 'draft-address')}${row(t.ean, eanText, 'draft-ean')}${d.charger_id ? row(t.charger, t.chargerYes, 'draft-charger') : ''}</dl>`;

  const city = s.city ?? d.city ?? '';
  const errors = fieldsInError(s, city);
  let fields = '';
  if (!address) {
    fields += `<p id="ask-address">${t.askAddress}</p>`;
    fields += input('postal_code', t.postalCode, s.postal_code ?? '', 'autocomplete="postal-code" maxlength="7" required', errors);
    fields += input('house_number', t.houseNumber, s.house_number ?? '', 'maxlength="12" required', errors);
    fields += input('house_number_addition', t.addition, s.house_number_addition ?? '', 'maxlength="6"', errors);
  }
  fields += input('street', t.street, s.street ?? '', 'autocomplete="address-line1" maxlength="120" required', errors);
  fields += input('city', t.city, city, 'autocomplete="address-level2" maxlength="120" required', errors);
  if (candidates.length) {
    const label = (e: string) => (s.eanLabels?.[e] ? `${e} (${t.houseNumber.toLowerCase()} ${s.eanLabels[e]})` : e);
    const picked = s.ean?.trim();
    const opts = candidates.map((e) => `<option value="${esc(e)}"${e === picked ? ' selected' : ''}>${esc(label(e))}</option>`).join('');
    const aria = errors.has('ean') ? ' aria-invalid="true" aria-describedby="error"' : '';
    fields += `<label for="ean">${t.pickEan}</label><select id="ean" name="ean"${aria}>${opts}</select>`;
  } else if (!d.ean_code) {
    // without an address the register may still find the EAN, so it is asked for only when it cannot
    fields += input('ean', t.enterEan, s.ean ?? '', `inputmode="numeric" pattern="[0-9 ]{18,24}"${address ? ' required' : ''}`, errors);
  }
  // the payout account: asked here, as nowhere else can a claimed customer give it (the value is never echoed back)
  fields += input('iban', t.iban, '', 'autocomplete="off" maxlength="42" required', errors, 'iban-hint');
  fields += `<p class="hint" id="iban-hint">${t.ibanHint}</p>`;
  // D248: the first field in error (in the form's order) takes the focus
  fields = fields.replace(' aria-invalid="true"', ' aria-invalid="true" autofocus');
  const error = s.errorCode ? `<p class="error" id="error" role="alert">${esc(t.errors[s.errorCode] ?? t.errorGeneric)}</p>` : '';
  const body = `<p>${esc(t.intro(d.partner_name, s.op.name))}</p>${details}${error}
<form method="post" action="${esc(s.action)}"><input type="hidden" name="locale" value="${s.locale}">${s.confirm ? `<input type="hidden" name="confirm" value="${esc(s.confirm)}">` : ''}${fields}
<p><button type="submit" id="confirm">${t.confirm}</button></p></form>`;
  return layout(s.locale, t.title, body, s.op, s.otherHref, s.errorCode ? t.errorTitle(t.title) : t.title);
}

export function claimDonePage(lc: Locale, next: NextStep, op: OperatorIdentity): string {
  const t = T[lc];
  return layout(lc, t.doneTitle, `<p id="message">${t.doneBody}</p>${nextStepHtml(lc, next, op)}`, op);
}

export function unsubscribePage(lc: Locale, email: string, action: string, op: OperatorIdentity): string {
  const t = T[lc];
  return layout(lc, t.unsubTitle, `<p>${esc(t.unsubBody(email))}</p><form method="post" action="${esc(action)}"><p><button type="submit" id="unsubscribe">${t.unsubButton}</button></p></form>`, op);
}

export function unsubscribedPage(lc: Locale, op: OperatorIdentity): string {
  return layout(lc, T[lc].unsubTitle, `<p id="message">${T[lc].unsubDone}</p>`, op);
}

export function unsubscribeNotFoundPage(lc: Locale, op: OperatorIdentity): string {
  return layout(lc, T[lc].notFoundTitle, `<p id="message">${T[lc].notFoundBody}</p>`, op);
}
