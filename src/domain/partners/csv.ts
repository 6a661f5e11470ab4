// POST /partner/drafts/import `csv` (spec §4.2): a header row, comma or semicolon separated, quotes allowed
// (also around separators and line breaks), an optional UTF-8 BOM, LF or CRLF line ends, Dutch header names
// (spec §2 aliases). Columns with unknown headers are ignored; charger columns too (CSV cannot pre-couple).
// Each row keeps its data row number (D210): the first record after the header is 1, a blank or empty record
// counts (a spreadsheet shows it as a row) and a quoted field spanning lines does not (it is one record).
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

export interface CsvRow {
  row: RawRow;
  /** 1-based data row number: the record right after the header is 1 (D210). */
  number: number;
}

const isEmptyRecord = (r: string[]) => r.every((v) => v.trim() === '');

export function parseDraftCsv(text: string): CsvRow[] {
  const body = text.replace(/^\uFEFF/, '');
  if (body.trim() === '') return [];
  let records: string[][];
  try {
    records = parse(body, {
      // from the header line, also when blank lines come before it
      delimiter: detectDelimiter(body.replace(/^\s+/, '')),
      bom: true,
      relax_column_count: true,
      // blank lines are kept as records so that every later row keeps the number the partner's spreadsheet shows
      skip_empty_lines: false,
      trim: true,
    });
  } catch (err) {
    throw new DomainError('invalid_request', `csv could not be parsed: ${(err as Error).message}`);
  }
  // blank lines before the header are not rows: the header is the first record with content
  const first = records.findIndex((r) => !isEmptyRecord(r));
  if (first < 0) return [];
  const [header, ...rows] = records.slice(first);
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
  const out: CsvRow[] = [];
  rows.forEach((r, i) => {
    if (isEmptyRecord(r)) return;
    const row: RawRow = {};
    columns.forEach((field, c) => {
      const v = r[c]?.trim();
      if (field && v && row[field] === undefined) row[field] = v;
    });
    out.push({ row, number: i + 1 });
  });
  return out;
}
