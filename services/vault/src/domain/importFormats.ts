/**
 * The files a card import reads (docs/adr/0015-card-import.md): one record per line, in
 * - `jsonl`: `{"id","number","expiryMonth","expiryYear","holderName"}` (snake_case and `expiry: "MM/YYYY"` too);
 * - `csv`: a header line naming the same columns, then one record per line (RFC 4180 quoting within a line);
 * - `stripe`: Stripe's card export, as JSON lines (`{"id":"cus_…","card":{"id":"card_…","number",…}}`)
 *   or as its CSV (`id,…,card.exp_month,card.exp_year,card.id,card.name,card.number,…`), told apart by
 *   the first character.
 * A record that cannot be read is refused with a reason code, never with its content: the reasons
 * go into the report and the logs, which must not carry card data.
 */

export const IMPORT_FORMATS = ['jsonl', 'csv', 'stripe'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

export function isImportFormat(value: string): value is ImportFormat {
  return (IMPORT_FORMATS as readonly string[]).includes(value);
}

/** A card as the old provider described it; the vault's tokenize path checks it like any other. */
export interface ImportedCard {
  number: string;
  expiryMonth: number;
  expiryYear: number;
  holderName: string;
  /** The old provider's id of the card (Stripe: card.id, else the customer's id); '' when the file has none. */
  oldId: string;
}

export type RecordRefusal =
  | 'record_malformed'
  | 'record_too_long'
  | 'number_missing'
  | 'expiry_missing'
  | 'expiry_invalid'
  | 'old_id_too_long'
  | 'header_missing_columns';

/** A refused record keeps its old id when that much could be read, so the report can name it. */
export type ParsedRecord = { ok: true; card: ImportedCard } | { ok: false; reason: RecordRefusal; oldId?: string };

/** Longest line read as a record; a longer one is refused (record_too_long) without being held. */
export const MAX_RECORD_BYTES = 16 * 1024;
const MAX_OLD_ID = 256;

export interface RecordParser {
  /** A record, or null for a line that holds none (blank, or the CSV header). */
  parse(line: string): ParsedRecord | null;
}

export function createRecordParser(format: ImportFormat): RecordParser {
  if (format === 'jsonl') return jsonParser(GENERIC_JSON);
  if (format === 'csv') return csvParser(GENERIC_COLUMNS);
  let chosen: RecordParser | undefined;
  return {
    parse(line) {
      if (chosen === undefined) {
        if (line.trim() === '') return null;
        chosen = line.trimStart().startsWith('{') ? jsonParser(STRIPE_JSON) : csvParser(STRIPE_COLUMNS);
      }
      return chosen.parse(line);
    },
  };
}

/** Where each field is in a JSON record: the first path that is present wins. */
type Paths = Record<'number' | 'expiryMonth' | 'expiryYear' | 'expiry' | 'holderName' | 'oldId', string[][]>;

const GENERIC_JSON: Paths = {
  number: [['number'], ['pan'], ['card_number']],
  expiryMonth: [['expiryMonth'], ['expiry_month'], ['exp_month']],
  expiryYear: [['expiryYear'], ['expiry_year'], ['exp_year']],
  expiry: [['expiry']],
  holderName: [['holderName'], ['holder_name'], ['name']],
  oldId: [['id']],
};

const STRIPE_JSON: Paths = {
  number: [['card', 'number']],
  expiryMonth: [['card', 'exp_month']],
  expiryYear: [['card', 'exp_year']],
  expiry: [],
  holderName: [['card', 'name'], ['name']],
  oldId: [['card', 'id'], ['id']],
};

function at(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function first(value: unknown, paths: readonly string[][]): unknown {
  for (const path of paths) {
    const found = at(value, path);
    if (found !== undefined && found !== null && found !== '') return found;
  }
  return undefined;
}

function jsonParser(paths: Paths): RecordParser {
  return {
    parse(line) {
      if (line.trim() === '') return null;
      if (line.length > MAX_RECORD_BYTES) return { ok: false, reason: 'record_too_long' };
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        return { ok: false, reason: 'record_malformed' };
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, reason: 'record_malformed' };
      const field = (name: keyof Paths): unknown => first(value, paths[name]);
      return toCard({
        number: field('number'),
        expiryMonth: field('expiryMonth'),
        expiryYear: field('expiryYear'),
        expiry: field('expiry'),
        holderName: field('holderName'),
        oldId: field('oldId'),
      });
    },
  };
}

/** Column names (lower case) per field, first present wins. */
type Columns = Record<keyof Paths, string[]>;

const GENERIC_COLUMNS: Columns = {
  number: ['number', 'pan', 'card_number'],
  expiryMonth: ['expirymonth', 'expiry_month', 'exp_month'],
  expiryYear: ['expiryyear', 'expiry_year', 'exp_year'],
  expiry: ['expiry'],
  holderName: ['holdername', 'holder_name', 'name'],
  oldId: ['id'],
};

const STRIPE_COLUMNS: Columns = {
  number: ['card.number'],
  expiryMonth: ['card.exp_month'],
  expiryYear: ['card.exp_year'],
  expiry: [],
  holderName: ['card.name', 'name'],
  oldId: ['card.id', 'id'],
};

/** One line's fields (RFC 4180 quoting; a quoted field may not span lines), or null when its quotes do not close. */
export function splitCsvLine(line: string): string[] | null {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    if (line[i] === '"') {
      let value = '';
      i += 1;
      for (;;) {
        const quote = line.indexOf('"', i);
        if (quote === -1) return null;
        value += line.slice(i, quote);
        if (line[quote + 1] === '"') {
          value += '"';
          i = quote + 2;
          continue;
        }
        i = quote + 1;
        break;
      }
      fields.push(value);
      if (i === line.length) return fields;
      if (line[i] !== ',') return null;
      i += 1;
    } else {
      const comma = line.indexOf(',', i);
      if (comma === -1) {
        fields.push(line.slice(i));
        return fields;
      }
      fields.push(line.slice(i, comma));
      i = comma + 1;
    }
  }
}

function csvParser(columns: Columns): RecordParser {
  let index: Partial<Record<keyof Paths, number[]>> | undefined;
  let headerRefusal: RecordRefusal | undefined;
  return {
    parse(line) {
      if (line.trim() === '') return null;
      if (line.length > MAX_RECORD_BYTES) return { ok: false, reason: 'record_too_long' };
      const fields = splitCsvLine(line);
      if (index === undefined && headerRefusal === undefined) {
        const names = (fields ?? []).map((name) => name.trim().toLowerCase());
        const found: Partial<Record<keyof Paths, number[]>> = {};
        for (const key of Object.keys(columns) as Array<keyof Paths>) {
          found[key] = columns[key].map((name) => names.indexOf(name)).filter((n) => n >= 0);
        }
        const hasExpiry = (found.expiry?.length ?? 0) > 0 || ((found.expiryMonth?.length ?? 0) > 0 && (found.expiryYear?.length ?? 0) > 0);
        if (fields === null || (found.number?.length ?? 0) === 0 || !hasExpiry) headerRefusal = 'header_missing_columns';
        else index = found;
        return headerRefusal === undefined ? null : { ok: false, reason: headerRefusal };
      }
      // Without a usable header no line can be read: each is refused for that reason.
      if (index === undefined) return { ok: false, reason: headerRefusal ?? 'header_missing_columns' };
      if (fields === null) return { ok: false, reason: 'record_malformed' };
      const columnsOf = index;
      const field = (name: keyof Paths): string | undefined => {
        for (const n of columnsOf[name] ?? []) {
          const value = fields[n]?.trim();
          if (value !== undefined && value !== '') return value;
        }
        return undefined;
      };
      return toCard({
        number: field('number'),
        expiryMonth: field('expiryMonth'),
        expiryYear: field('expiryYear'),
        expiry: field('expiry'),
        holderName: field('holderName'),
        oldId: field('oldId'),
      });
    },
  };
}

function integerOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*\d{1,4}\s*$/.test(value)) return Number(value);
  return undefined;
}

/** `MM/YYYY`, `MM/YY`, `MM-YYYY` or `YYYY-MM`. */
function parseExpiry(value: unknown): { month: number; year: number } | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  let m = /^(\d{1,2})\s*[/-]\s*(\d{2}|\d{4})$/.exec(text);
  if (m !== null) {
    const year = Number(m[2]);
    return { month: Number(m[1]), year: (m[2] as string).length === 2 ? 2000 + year : year };
  }
  m = /^(\d{4})-(\d{2})$/.exec(text);
  if (m !== null) return { month: Number(m[2]), year: Number(m[1]) };
  return undefined;
}

function toCard(raw: Record<keyof Paths, unknown>): ParsedRecord {
  const oldId = typeof raw.oldId === 'string' ? raw.oldId.trim() : typeof raw.oldId === 'number' ? String(raw.oldId) : '';
  if (oldId.length > MAX_OLD_ID) return { ok: false, reason: 'old_id_too_long' };
  const refuse = (reason: RecordRefusal): ParsedRecord => ({ ok: false, reason, oldId });
  // A number given as a JSON number has already lost digits past 2^53: refused, not guessed.
  if (raw.number === undefined) return refuse('number_missing');
  if (typeof raw.number !== 'string') return refuse('record_malformed');
  const number = raw.number.replace(/[\s-]/g, '');
  if (number === '') return refuse('number_missing');
  if (raw.expiryMonth === undefined && raw.expiryYear === undefined && raw.expiry === undefined) return refuse('expiry_missing');
  let month = integerOf(raw.expiryMonth);
  let year = integerOf(raw.expiryYear);
  if (raw.expiryMonth === undefined && raw.expiryYear === undefined) {
    const parsed = parseExpiry(raw.expiry);
    if (parsed === undefined) return refuse('expiry_invalid');
    month = parsed.month;
    year = parsed.year;
  }
  if (month === undefined || year === undefined) return refuse('expiry_invalid');
  // Two-digit years appear in exports; four digits is what the vault stores.
  if (year < 100) year += 2000;
  const holderName = typeof raw.holderName === 'string' ? raw.holderName.trim() : '';
  return { ok: true, card: { number, expiryMonth: month, expiryYear: year, holderName, oldId } };
}

/**
 * The writers of the same formats, for card exports (issue 29 item 2, docs/migration.md "Leaving
 * Tessera (export)"): what a writer makes, the parser of its format above reads back as the same
 * cards, the Tessera token standing where the old provider's id stood.
 */
export interface ExportedCard {
  /** The Tessera token: the "old id" of whoever imports the file next. */
  id: string;
  number: string;
  expiryMonth: number;
  expiryYear: number;
  /** '' when the token has no holder name (then left out of JSON records). */
  holderName: string;
}

export interface RecordWriter {
  /** What comes before the first record ('' for JSON lines). */
  header: string;
  /** One record, its line end included. */
  write(card: ExportedCard): string;
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) || value !== value.trim() ? `"${value.replace(/"/g, '""')}"` : value;
}

export function createRecordWriter(format: ImportFormat): RecordWriter {
  if (format === 'jsonl') {
    return {
      header: '',
      write: (card) =>
        `${JSON.stringify({
          id: card.id,
          number: card.number,
          expiryMonth: card.expiryMonth,
          expiryYear: card.expiryYear,
          ...(card.holderName === '' ? {} : { holderName: card.holderName }),
        })}\n`,
    };
  }
  if (format === 'csv') {
    return {
      header: 'id,number,expiry_month,expiry_year,holder_name\n',
      write: (card) =>
        `${[card.id, card.number, String(card.expiryMonth), String(card.expiryYear), card.holderName].map(csvField).join(',')}\n`,
    };
  }
  // Stripe's card export, as JSON lines: the customer is the token too, so an importer that keys on either finds it.
  return {
    header: '',
    write: (card) =>
      `${JSON.stringify({
        id: card.id,
        card: {
          id: card.id,
          number: card.number,
          exp_month: card.expiryMonth,
          exp_year: card.expiryYear,
          ...(card.holderName === '' ? {} : { name: card.holderName }),
        },
      })}\n`,
  };
}
