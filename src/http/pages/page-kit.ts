// What every server-rendered page shares (C7.3): one stylesheet (the signing page's look, for the claim and
// unsubscribe pages too), the HTML frame, and the operator's footer. The stylesheet fits a 360 px screen: long
// values (EANs, addresses, hashes, e-mail addresses) wrap anywhere, the term/value list stacks on a narrow screen,
// and every form control takes the full width with its button on a line of its own below it.
import type { OperatorIdentity } from '../../lib/operator.ts';

export type PageLocale = 'nl' | 'en';

/**
 * D212: the path the service is served under, from PUBLIC_BASE_URL ('' at the root, '/ere' for https://example.nl/ere
 * behind a proxy that strips /ere). Every URL a page writes starts with it: a root path such as `/claim/…` would
 * leave the service for the rest of the proxy's site.
 */
export const basePathOf = (publicBaseUrl: string): string => new URL(publicBaseUrl).pathname.replace(/\/+$/, '');

export const esc = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export const PAGE_CSS = `*,*::before,*::after{box-sizing:border-box}
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem;color:#1d2733;line-height:1.5;overflow-wrap:anywhere}
h1{font-size:1.5rem}h2{font-size:1.2rem}
dl{display:grid;grid-template-columns:minmax(0,max-content) minmax(0,1fr);gap:.25rem 1rem}dt{font-weight:600}dd{margin:0;min-width:0}
@media (max-width:30rem){dl{grid-template-columns:minmax(0,1fr)}dd{margin-bottom:.5rem}}
.clause{border:1px solid #c5ccd6;border-radius:6px;padding:1rem;background:#f7f9fb;white-space:pre-wrap}
.meta{font-size:.85rem;color:#53606f}.error{color:#a4001c;font-weight:600}.next{border-left:4px solid #1d5fbf;padding:.25rem 1rem;background:#f2f6fc}
label{display:block;margin:.75rem 0 .25rem}
input[type=text],input:not([type]),select{display:block;width:100%;max-width:100%;padding:.5rem;font-size:1rem}
label input[type=checkbox]{margin-right:.4rem}
button,.button{display:inline-block;margin-top:1rem;padding:.6rem 1.2rem;font-size:1rem}
.lang{float:right;margin:0 0 0 1rem}
footer{margin-top:3rem;padding-top:1rem;border-top:1px solid #c5ccd6;font-size:.85rem;color:#53606f}
footer p{margin:.25rem 0}`;

const FOOTER = {
  nl: { kvk: 'KvK', support: 'Vragen?', privacy: 'Privacyverklaring' },
  en: { kvk: 'Chamber of Commerce (KvK)', support: 'Questions?', privacy: 'Privacy statement' },
} as const;

/** C7.3: the operator's name, address, KvK number, support address and privacy page. */
export function footerHtml(op: OperatorIdentity, lc: PageLocale): string {
  const t = FOOTER[lc];
  const who = [esc(op.name), op.address ? esc(op.address) : null, op.kvk ? `${t.kvk} ${esc(op.kvk)}` : null].filter(Boolean).join(' · ');
  const contact = [
    op.supportEmail ? `${t.support} <a href="mailto:${esc(op.supportEmail)}" id="operator-support">${esc(op.supportEmail)}</a>` : null,
    op.privacyUrl ? `<a href="${esc(op.privacyUrl)}" id="operator-privacy">${t.privacy}</a>` : null,
  ].filter(Boolean);
  return `<footer id="operator"><p>${who}</p>${contact.length ? `<p>${contact.join(' · ')}</p>` : ''}</footer>`;
}

/** The head of the pages that allow an inline stylesheet (signing, claim, unsubscribe). */
export const INLINE_STYLE = `<style>
${PAGE_CSS}
</style>`;

/**
 * The page frame: language, viewport, the page's stylesheet (inline, or the link and script tags a page with a
 * stricter CSP gives), the body and the operator's footer.
 */
export function pageHtml(lc: PageLocale, title: string, body: string, op: OperatorIdentity, head = INLINE_STYLE): string {
  return `<!doctype html>
<html lang="${lc}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${esc(title)}</title>
${head}
</head>
<body>
<main>
${body}
</main>
${footerHtml(op, lc)}
</body>
</html>`;
}
