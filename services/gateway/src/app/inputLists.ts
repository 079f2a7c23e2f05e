import { TesseraError } from '@tessera/common';
import type { PatternResult } from '../domain/keyRestrictions';

/** Shown back in a message: short, printable, so an error can never carry a blob of anything. */
export function quoteInput(value: string): string {
  const printable = value.replace(/[^\x20-\x7e]/g, '?');
  return `"${printable.length > 60 ? `${printable.slice(0, 60)}…` : printable}"`;
}

/**
 * A list parameter (`allowedCidrs`, `pspHosts`, …) in canonical form, de-duplicated; undefined when
 * absent. An entry is named in errors by `label` (`IP range "10.0.0.0/33" is not …`) and by its
 * `param` (`allowedCidrs[1]`), so the admin API and the CLI can both say which one is wrong.
 */
export function canonicalList(
  value: unknown,
  name: string,
  max: number,
  canonical: (raw: string) => PatternResult,
  label: string,
): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value))
    throw new TesseraError('parameter_invalid', { param: name, message: `"${name}" must be an array of strings.` });
  if (value.length > max) throw new TesseraError('parameter_invalid', { param: name, message: `At most ${max} entries in "${name}".` });
  const out: string[] = [];
  value.forEach((entry: unknown, i) => {
    const param = `${name}[${i}]`;
    if (typeof entry !== 'string' || entry.length > 300) {
      throw new TesseraError('parameter_invalid', { param, message: `Each entry of "${name}" must be a string.` });
    }
    const result = canonical(entry);
    if (!result.ok)
      throw new TesseraError('parameter_invalid', { param, message: `${label} ${quoteInput(entry.trim())} ${result.message}.` });
    if (!out.includes(result.value)) out.push(result.value);
  });
  return out;
}
