import { z } from 'zod';
import { maskCardNumbers, mayHoldCardNumber, TesseraError } from '@tessera/common';
import type { PatternResult } from '@tessera/merchant-data';

/**
 * Shown back in a message: short, printable, card numbers masked (an IP range or a parameter name
 * is the caller's text), so an error can never carry a blob of anything or a PAN.
 */
export function quoteInput(value: string): string {
  const printable = maskCardNumbers(value).replace(/[^\x20-\x7e]/g, '?');
  return `"${printable.length > 60 ? `${printable.slice(0, 60)}…` : printable}"`;
}

/**
 * A list parameter (`allowedCidrs`, `pspHosts`, …) in canonical form, de-duplicated. An entry is
 * named in errors by `label` (`IP range "10.0.0.0/33" is not …`) and by its path
 * (`allowedCidrs[1]`), so the admin API and the CLI can both say which one is wrong.
 */
export function canonicalListSchema(name: string, max: number, canonical: (raw: string) => PatternResult, label: string) {
  return z
    .array(
      z.string({ error: `Each entry of "${name}" must be a string.` }).max(300, { error: `Each entry of "${name}" must be a string.` }),
      {
        error: `"${name}" must be an array of strings.`,
      },
    )
    .max(max, { error: `At most ${max} entries in "${name}".` })
    .superRefine((entries, ctx) => {
      entries.forEach((entry, i) => {
        // A list is stored and shown back: an entry that could be a card number (a host name
        // such as 4242424242424242.example is valid) is refused rather than kept.
        if (mayHoldCardNumber(entry)) {
          ctx.addIssue({ code: 'custom', path: [i], message: `${label} ${quoteInput(entry.trim())} looks like a card number.` });
          return;
        }
        const result = canonical(entry);
        if (!result.ok) ctx.addIssue({ code: 'custom', path: [i], message: `${label} ${quoteInput(entry.trim())} ${result.message}.` });
      });
    })
    .transform((entries) => {
      const out: string[] = [];
      for (const entry of entries) {
        const result = canonical(entry);
        if (result.ok && !out.includes(result.value)) out.push(result.value);
      }
      return out;
    });
}

/** `allowedCidrs[1]`, `kind`: the path of an issue as the error's `param`. */
function paramOf(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (out, segment) => (typeof segment === 'number' ? `${out}[${segment}]` : out === '' ? String(segment) : `${out}.${String(segment)}`),
    '',
  );
}

/**
 * zod's issues as the one TesseraError the caller sees, in the admin API's words: an unknown field
 * first (a typo such as `allowedIps` must not silently do nothing), then the first problem, with
 * the offending entry as `param`.
 */
export function errorFromIssues(issues: readonly z.core.$ZodIssue[], input: Record<string, unknown>): TesseraError {
  const unknown = issues.find((issue) => issue.code === 'unrecognized_keys');
  if (unknown && unknown.code === 'unrecognized_keys') {
    // Caller-chosen text: masked and bounded before it is echoed.
    const name = maskCardNumbers(unknown.keys[0] ?? '').slice(0, 128);
    return new TesseraError('parameter_unknown', { param: name, message: `Unknown parameter ${quoteInput(name)}.` });
  }
  const issue = issues[0];
  if (!issue) return new TesseraError('invalid_request');
  const param = paramOf(issue.path);
  if (param === '') return new TesseraError('invalid_request', { message: issue.message });
  if (issue.path.length === 1 && isAbsent(issue, input[param])) {
    return new TesseraError('parameter_missing', { param, message: `"${param}" is required.` });
  }
  return new TesseraError('parameter_invalid', { param, message: issue.message });
}

/**
 * Not given: no field at all, or a text field sent as null or "" (a cleared form input), which
 * the admin API has always read as missing rather than as a wrong value.
 */
function isAbsent(issue: z.core.$ZodIssue, value: unknown): boolean {
  if (value === undefined) return true;
  if (value !== null && value !== '') return false;
  return (issue.code === 'invalid_type' && issue.expected === 'string') || (issue.code === 'too_small' && issue.origin === 'string');
}

/** A text field that must be given: null or "" is missing, longer than `maxLength` is invalid. */
export function requiredText(name: string, maxLength: number) {
  return optionalText(name, maxLength)
    .unwrap()
    .min(1, { error: `"${name}" is required.` });
}

/** A text field that may be left out (the caller decides what "" means). */
export function optionalText(name: string, maxLength: number) {
  return z
    .string({ error: `"${name}" must be a string.` })
    .max(maxLength, { error: `"${name}" must be at most ${maxLength} characters.` })
    .optional();
}

/** `value` checked by `schema`, or the TesseraError for its first problem. */
export function parseInput<S extends z.ZodType>(schema: S, value: Record<string, unknown>): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw errorFromIssues(result.error.issues, value);
  return result.data;
}

/** One list parameter on its own (undefined when absent). */
export function canonicalList(
  value: unknown,
  name: string,
  max: number,
  canonical: (raw: string) => PatternResult,
  label: string,
): string[] | undefined {
  if (value === undefined) return undefined;
  return parseInput(z.object({ [name]: canonicalListSchema(name, max, canonical, label) }), { [name]: value })[name];
}
