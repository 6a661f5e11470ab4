// POST /partner/drafts/import `csv` (spec §4.2): a header row, comma or semicolon separated, quotes allowed
// (also around separators and line breaks), an optional UTF-8 BOM, LF or CRLF line ends, Dutch header names
// (spec §2 aliases). Columns with unknown headers are ignored; charger columns too (CSV cannot pre-couple).
import { parse } from 'csv-parse/sync';
import { DomainError } from '../errors.ts';
import { CHARGER_FIELDS, fieldOf, type DraftField, type RawRow } from './fields.ts';

/** The separator of the header line: the more frequent of ';' and ',' outside quotes (ties: ','). */
export function detectDelimiter(text: string): ',' | ';' {
  let commas = 0;
  let semis = 0;
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && ch === ',') commas++;
    else if (!quoted && ch === ';') semis++;
  }
  return semis > commas ? ';' : ',';
}

export function parseDraftCsv(text: string): RawRow[] {
  const body = text.replace(/^\uFEFF/, '');
  if (body.trim() === '') return [];
  let records: string[][];
  try {
    records = parse(body, {
      delimiter: detectDelimiter(body),
      bom: true,
      relax_column_count: true,
      skip_empty_lines: true,
      trim: true,
    });
  } catch (err) {
    throw new DomainError('invalid_request', `csv could not be parsed: ${(err as Error).message}`);
  }
  const [header, ...rows] = records;
  if (!header) return [];
  const columns: Array<DraftField | undefined> = header.map((h) => {
    const f = fieldOf(h);
    return f && !CHARGER_FIELDS.includes(f) ? f : undefined;
  });
  // D175: both columns, as the message says (a header naming one of them was taken and every row rejected invalid)
  const missing = [
    ...(columns.includes('name') ? [] : ['name (naam)']),
    ...(columns.includes('email') ? [] : ['email (emailadres, mail)']),
  ];
  if (missing.length) {
    throw new DomainError(
      'invalid_request',
      `csv needs a header row naming both the columns name (naam) and email (emailadres, mail); it has no ${missing.join(' and no ')} column.`,
    );
  }
  return rows
    .filter((r) => r.some((v) => v.trim() !== ''))
    .map((r) => {
      const row: RawRow = {};
      columns.forEach((field, i) => {
        const v = r[i]?.trim();
        if (field && v && row[field] === undefined) row[field] = v;
      });
      return row;
    });
}
