// The operator's machtiging clause (C2.3), versioned. A published version is never edited: a new wording
// gets a new version key and becomes CURRENT_CLAUSE_VERSION. Links remember the version they were issued
// with; the mandate records the version and the SHA-256 of the exact text shown (placeholders filled in).
import crypto from 'node:crypto';

export type Locale = 'nl' | 'en';

interface ClauseVersion {
  nl: string;
  en: string;
}

// Placeholders: {operator} {holder} {ean} {address}
export const CLAUSES: Record<string, ClauseVersion> = {
  '2026-11-v1': {
    nl:
      'Namens de aansluitinghouder {holder} machtig ik {operator} om de elektriciteit die via de aansluiting met EAN-code {ean} ' +
      'op het adres {address} met een MID-gecertificeerde laadpaal aan elektrische voertuigen is geleverd, te ' +
      'registreren als emissiereductie-eenheden (ERE) bij de Nederlandse Emissieautoriteit, en de daarvoor ' +
      'benodigde meetgegevens van deze aansluiting en laadpaal op te vragen en te verwerken. ' +
      'Ik verklaar dat ik bevoegd ben deze machtiging voor deze aansluiting te geven en dat ik de ERE voor deze ' +
      'levering niet via een andere partij laat registreren. ' +
      'Deze machtiging geldt vanaf het moment van ondertekenen en vervalt wanneer de EAN-code of het adres van de ' +
      'aansluiting wijzigt. Ik kan haar op elk moment intrekken bij {operator}.',
    en:
      'On behalf of the connection holder {holder}, I authorise {operator} to register, as emission-reduction units (ERE) with the ' +
      'Dutch Emissions Authority, the electricity delivered to electric vehicles by a MID-certified charger through ' +
      'the connection with EAN code {ean} at {address}, and to request and process the metering data of this ' +
      'connection and charger needed for that. ' +
      'I declare that I am entitled to give this authorisation for this connection and that I do not have the ERE ' +
      'for these deliveries registered through any other party. ' +
      'This authorisation applies from the moment of signing and lapses when the EAN code or the address of the ' +
      'connection changes. I can withdraw it at any time with {operator}.',
  },
};

export const CURRENT_CLAUSE_VERSION = '2026-11-v1';

export interface ClauseFacts {
  operator: string;
  holder: string;
  ean: string;
  address: string;
}

export function renderClause(version: string, locale: Locale, facts: ClauseFacts): string {
  const v = CLAUSES[version] ?? CLAUSES[CURRENT_CLAUSE_VERSION]!;
  // C7.3: a value that ends a sentence with its own period ("ERE Gateway B.V.") takes the sentence's period
  return v[locale].replace(/\{(operator|holder|ean|address)\}(\.?)/g, (_, k: keyof ClauseFacts, dot: string) =>
    dot && /[.!?]$/.test(facts[k]) ? facts[k] : facts[k] + dot,
  );
}

export const sha256 = (text: string): string => crypto.createHash('sha256').update(text, 'utf8').digest('hex');
