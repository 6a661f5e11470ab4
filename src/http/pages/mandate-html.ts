// Server-rendered HTML of the signing page (C2.3): no JavaScript, Dutch by default, English with locale=en.
import type { Locale, SigningFacts } from '../../domain/mandates/index.ts';
import { humanAmsterdam } from '../../lib/amsterdam-time.ts';
import type { OperatorIdentity } from '../../lib/operator.ts';
import { esc, pageHtml } from './page-kit.ts';

const T = {
  nl: {
    title: 'Machtiging ondertekenen',
    intro: (op: string) => `${op} vraagt uw machtiging om de laadenergie van uw aansluiting te registreren als emissiereductie-eenheden (ERE).`,
    holder: 'Aansluitinghouder',
    ean: 'EAN-code',
    address: 'Adres',
    clause: 'Tekst van de machtiging',
    version: 'Versie',
    authorised: 'Gemachtigde',
    name: 'Uw volledige naam',
    consent: 'Ik heb de tekst gelezen en geef deze machtiging.',
    sign: 'Machtiging ondertekenen',
    expires: 'Deze link is geldig tot',
    errName: 'Vul uw volledige naam in.',
    errConsent: 'Vink aan dat u de machtiging geeft.',
    signedTitle: 'Machtiging ondertekend',
    signedBody: (at: string) => `De machtiging is ondertekend op ${at}. U kunt dit venster sluiten.`,
    back: 'Terug naar de aanvrager',
    staleTitle: 'De gegevens zijn gewijzigd',
    staleBody: 'De gegevens van deze aansluiting zijn gewijzigd nadat u de pagina opende. Er is niets vastgelegd. Laad de pagina opnieuw en lees de tekst nog eens.',
    reload: 'Pagina opnieuw laden',
    notFoundTitle: 'Link niet gevonden',
    notFoundBody: 'Deze link is onbekend of onvolledig. Controleer de link of vraag een nieuwe aan.',
    expiredTitle: 'Link verlopen',
    expiredBody: 'Deze link is verlopen. Vraag de aanvrager om een nieuwe link.',
    goneTitle: 'Link niet meer geldig',
    goneBody: 'Deze aansluiting is niet meer actief; de link kan niet meer worden gebruikt.',
    voidTitle: 'Link vervallen',
    voidBody: 'De machtiging van deze link is vervallen omdat de EAN-code of het adres van de aansluiting is gewijzigd. De link kan niet meer worden gebruikt. Vraag de aanvrager om een nieuwe link.',
    other: 'English',
    otherLang: 'en',
    errorTitle: (title: string) => `Fout: ${title}`,
  },
  en: {
    title: 'Sign the authorisation',
    intro: (op: string) => `${op} asks for your authorisation (machtiging) to register the charging energy of your connection as emission-reduction units (ERE).`,
    holder: 'Connection holder',
    ean: 'EAN code',
    address: 'Address',
    clause: 'Text of the authorisation',
    version: 'Version',
    authorised: 'Authorised party',
    name: 'Your full name',
    consent: 'I have read the text and I give this authorisation.',
    sign: 'Sign the authorisation',
    expires: 'This link is valid until',
    errName: 'Enter your full name.',
    errConsent: 'Tick the box to give the authorisation.',
    signedTitle: 'Authorisation signed',
    signedBody: (at: string) => `The authorisation was signed on ${at}. You can close this window.`,
    back: 'Back to the requester',
    staleTitle: 'The details have changed',
    staleBody: 'The details of this connection changed after you opened the page. Nothing was recorded. Reload the page and read the text again.',
    reload: 'Reload the page',
    notFoundTitle: 'Link not found',
    notFoundBody: 'This link is unknown or incomplete. Check the link or ask for a new one.',
    expiredTitle: 'Link expired',
    expiredBody: 'This link has expired. Ask the requester for a new link.',
    goneTitle: 'Link no longer valid',
    goneBody: 'This connection is no longer active; the link can no longer be used.',
    voidTitle: 'Link void',
    voidBody: 'The authorisation of this link lapsed because the EAN code or the address of the connection changed. The link can no longer be used. Ask the requester for a new link.',
    other: 'Nederlands',
    otherLang: 'nl',
    errorTitle: (title: string) => `Error: ${title}`,
  },
} as const;

/** C7.3: an instant as the customer reads it (Amsterdam time, the zone named). */
const when = (iso: string, locale: Locale): string => humanAmsterdam(new Date(iso), locale);

export function formPage(
  f: SigningFacts,
  action: string,
  opts: { errors?: Array<'name' | 'consent'>; name?: string; otherLocaleHref: string },
  op: OperatorIdentity,
): string {
  const t = T[f.locale];
  const errs = opts.errors ?? [];
  const name = opts.name ?? f.signatoryName;
  // D241: a field in error says so (aria-invalid) and names its message (aria-describedby), the message is announced
  // (role="alert") and the title starts with "Fout:"/"Error:" (what a screen reader reads first on the new page).
  // Consent is checked independently of the name: when only the name was missing, the box the customer ticked on
  // this same text (the clause's hash is posted again) stays ticked.
  // the first field in error (in the form's order) takes the focus, as the dashboard's sign-in field does (D248)
  const first = (['name', 'consent'] as const).find((f) => errs.includes(f));
  const invalid = (field: 'name' | 'consent') => (errs.includes(field) ? ` aria-invalid="true" aria-describedby="error-${field}"${field === first ? ' autofocus' : ''}` : '');
  const ticked = errs.length && !errs.includes('consent') ? ' checked' : '';
  return pageHtml(
    f.locale,
    errs.length ? t.errorTitle(t.title) : t.title,
    `<a class="lang" href="${esc(opts.otherLocaleHref)}" lang="${t.otherLang}" hreflang="${t.otherLang}">${t.other}</a>
<h1>${t.title}</h1>
<p>${esc(t.intro(f.operator))}</p>
<dl>
<dt>${t.holder}</dt><dd id="holder">${esc(f.holder)}</dd>
<dt>${t.ean}</dt><dd id="ean">${esc(f.ean)}</dd>
<dt>${t.address}</dt><dd id="address">${esc(f.address)}</dd>
<dt>${t.authorised}</dt><dd>${esc(f.operator)}</dd>
</dl>
<h2>${t.clause}</h2>
<div class="clause" id="clause">${esc(f.clauseText)}</div>
<p class="meta">${t.version}: <span id="clause-version">${esc(f.clauseVersion)}</span> · SHA-256: ${esc(f.clauseSha256)}</p>
<form method="post" action="${esc(action)}">
<input type="hidden" name="clause_sha256" value="${esc(f.clauseSha256)}">
<input type="hidden" name="locale" value="${f.locale}">
${errs.includes('name') ? `<p class="error" id="error-name" role="alert">${t.errName}</p>` : ''}
<label for="full_name">${t.name}</label>
<input type="text" id="full_name" name="full_name" value="${esc(name)}" autocomplete="name" required maxlength="200"${invalid('name')}>
${errs.includes('consent') ? `<p class="error" id="error-consent" role="alert">${t.errConsent}</p>` : ''}
<label><input type="checkbox" id="consent" name="consent" value="yes" required${ticked}${invalid('consent')}> ${t.consent}</label>
<button type="submit" id="sign">${t.sign}</button>
</form>
<p class="meta" id="expires">${t.expires} ${esc(when(f.expiresAt, f.locale))}</p>`,
    op,
  );
}

export function signedPage(locale: Locale, signedAt: string | null, returnUrl: string | null, op: OperatorIdentity): string {
  const t = T[locale];
  const at = signedAt ? when(signedAt, locale) : '';
  return pageHtml(
    locale,
    t.signedTitle,
    `<h1 id="signed">${t.signedTitle}</h1><p id="signed-at">${esc(t.signedBody(at))}</p>${returnUrl ? `<p><a href="${esc(returnUrl)}">${t.back}</a></p>` : ''}`,
    op,
  );
}

export function stalePage(locale: Locale, href: string, op: OperatorIdentity): string {
  const t = T[locale];
  return pageHtml(locale, t.staleTitle, `<h1>${t.staleTitle}</h1><p>${t.staleBody}</p><p><a href="${esc(href)}">${t.reload}</a></p>`, op);
}

export function errorPage(locale: Locale, kind: 'not_found' | 'expired' | 'gone' | 'void', op: OperatorIdentity): string {
  const t = T[locale];
  const texts = {
    not_found: [t.notFoundTitle, t.notFoundBody],
    expired: [t.expiredTitle, t.expiredBody],
    gone: [t.goneTitle, t.goneBody],
    void: [t.voidTitle, t.voidBody],
  } as const;
  const [title, body] = texts[kind];
  return pageHtml(locale, title, `<h1 id="error">${title}</h1><p>${body}</p>`, op);
}
