import { parseAllDocuments } from 'yaml';
import { z } from 'zod';

/**
 * A route document: what a merchant keeps in git and applies with `npm run routes -- apply`. One
 * zod schema validates it everywhere (CLI, admin API, the services that run routes) and makes the
 * reference in docs/routes.md (`npm run docs:routes`). The shape follows VGS's route YAML and
 * Basis Theory's pre-configured proxies, kept to what Tessera runs: where card data is, what is
 * stored, what is put back.
 */

export const ALIAS_FORMATS = ['token', 'card_bin_last4', 'card_last4', 'uuid'] as const;
export type AliasFormat = (typeof ALIAS_FORMATS)[number];

export const STORED_FIELDS = ['number', 'expiry_month', 'expiry_year', 'expiry', 'cvv', 'holder'] as const;
export type StoredField = (typeof STORED_FIELDS)[number];

export const MAX_FILTERS = 50;
export const MAX_OUTBOUND_HOSTS = 20;
export const ROUTE_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

const store = z.enum(STORED_FIELDS, { error: `"store" must be one of ${STORED_FIELDS.join(', ')}.` }).meta({
  description:
    'What the place holds: `number` (the card number, replaced by its alias), `expiry_month`, `expiry_year`, `expiry` (MM/YY or MM/YYYY), `cvv`, `holder`.',
});
const aliasFormat = z
  .enum(ALIAS_FORMATS, { error: `"aliasFormat" must be one of ${ALIAS_FORMATS.join(', ')}.` })
  .default('token')
  .meta({
    description:
      "For `store: number`: the alias put in the card number's place (inbound) or looked for (outbound, text filters): `token` (`tok.…`), `card_bin_last4` (Luhn-valid, same length, first 6 and last 4 kept), `card_last4` (Luhn-valid, same length, last 4 kept), `uuid`.",
  });

/** RFC 6901: empty (the whole document) or `/`-separated reference tokens, `~0` and `~1` escaped. */
const JSON_POINTER = /^(?:\/(?:[^~/]|~[01])*)*$/;

const jsonFilter = z.strictObject({
  location: z.literal('json').meta({ description: 'A JSON body (`application/json`, `*/*+json`).' }),
  pointer: z
    .string()
    .min(2, { error: 'A JSON pointer names a member: "/card/number".' })
    .max(512)
    .regex(JSON_POINTER, { error: 'A JSON pointer is "/" + member names, "~0" for "~" and "~1" for "/" (RFC 6901).' })
    .meta({ description: 'RFC 6901 JSON pointer to a string or number: `/card/number`, `/payment_method/card/cvc`.' }),
  store,
  aliasFormat,
});
const formFilter = z.strictObject({
  location: z.literal('form').meta({ description: 'A form body (`application/x-www-form-urlencoded`).' }),
  field: z.string().min(1).max(256).meta({ description: 'The field name as the form sends it, decoded: `card[number]`, `cc-number`.' }),
  store,
  aliasFormat,
});
const textFilter = z.strictObject({
  location: z.literal('text').meta({
    description:
      'Any body, JSON and form ones included: card numbers wherever they appear, in JSON strings and numbers, form values, plain text.',
  }),
  pattern: z.literal('card_number').meta({
    description: '`card_number`: 12-19 digits, optionally grouped by spaces or hyphens, Luhn-valid. Outbound: aliases of `aliasFormat`.',
  }),
  store: z.literal('number', { error: 'A text filter finds card numbers: "store" must be "number".' }),
  aliasFormat,
});

export const routeFilterSchema = z.discriminatedUnion('location', [jsonFilter, formFilter, textFilter], {
  error: '"location" must be json, form or text.',
});
export type RouteFilter = z.output<typeof routeFilterSchema>;
export type RouteFilterInput = z.input<typeof routeFilterSchema>;

function isHostName(value: string): boolean {
  return value.length <= 253 && /^(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$|^localhost$/.test(value);
}

const upstream = z
  .string()
  .max(2048)
  .refine(
    (value) => {
      try {
        const url = new URL(value);
        return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '' && url.hash === '';
      } catch {
        return false;
      }
    },
    { error: '"upstream" must be an http(s) URL without credentials or fragment.' },
  )
  .meta({ description: "The merchant's server the rewritten request goes to: `https://shop.example/checkout` (live routes: https only)." });

const inboundSchema = z
  .strictObject({
    path: z
      .string()
      .regex(/^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]{0,255}$/, { error: '"path" must start with "/" and be a URL path.' })
      // The inbound service answers its probes there (docs/proxies.md).
      .refine((p) => !/^\/(?:healthz|readyz)(?:\/|$)/.test(p), { error: '"path" may not be /healthz or /readyz (the service\'s own).' })
      .optional()
      .meta({
        description: 'Tessera serves the route at this path on INBOUND_PORT (`/checkout`); the rest of the path is appended to `upstream`.',
      }),
    host: z
      .string()
      .refine((h) => isHostName(h) && !h.startsWith('*.'), { error: '"host" must be a host name.' })
      .optional()
      .meta({ description: 'Or: Tessera serves the route for requests to this host name (a CNAME to Tessera).' }),
    upstream,
  })
  .refine((v) => (v.path === undefined) !== (v.host === undefined), { error: 'An inbound route names either "path" or "host".' });

const outboundSchema = z.strictObject({
  hosts: z
    .array(z.string().refine(isHostName, { error: 'An outbound host is a host name or "*.example.com".' }))
    .min(1, { error: 'An outbound route names at least one host.' })
    .max(MAX_OUTBOUND_HOSTS)
    .meta({
      description: 'PSP hosts the forward proxy opens for this route (`api.stripe.com`, `*.adyen.com`); a CONNECT to any other is refused.',
    }),
});

export const routeDocumentSchema = z
  .strictObject({
    id: z
      .string({ error: '"id" must be a string.' })
      .regex(ROUTE_ID_PATTERN, { error: '"id" must be 1-64 lower-case letters, digits, "_" or "-".' })
      .meta({ description: 'Unique per merchant: applying a document with an existing id replaces that route.' }),
    kind: z.enum(['inbound', 'outbound'], { error: '"kind" must be inbound or outbound.' }).meta({
      description:
        '`inbound`: card data is taken out of requests to Tessera and the request forwarded upstream. `outbound`: aliases are replaced by card data on the way to a PSP.',
    }),
    mode: z.enum(['test', 'live'], { error: '"mode" must be test or live.' }).meta({
      description: 'Which tokens the route makes or reads, as for API keys; live inbound upstreams must be https.',
    }),
    description: z.string().max(500).optional().meta({ description: 'Free text for people.' }),
    inbound: inboundSchema.optional().meta({ description: 'Inbound routes only.' }),
    outbound: outboundSchema.optional().meta({ description: 'Outbound routes only.' }),
    filters: z.array(routeFilterSchema).min(1, { error: 'A route has at least one filter.' }).max(MAX_FILTERS).meta({
      description:
        'Where card data is, in order: several may name the number (a JSON pointer and a form field for the same route). One card per request: two different numbers are refused.',
    }),
    unmatchedCardData: z.enum(['refuse', 'redact'], { error: '"unmatchedCardData" must be refuse or redact.' }).default('refuse').meta({
      description:
        'Inbound: what happens to card-number-like data in a place no filter names. `refuse` answers 400 and forwards nothing; `redact` replaces it with `[redacted]`.',
    }),
  })
  .superRefine((route, ctx) => {
    if (route.kind === 'inbound' && (route.inbound === undefined || route.outbound !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['inbound'], message: 'An inbound route has "inbound" and no "outbound".' });
    }
    if (route.kind === 'outbound' && (route.outbound === undefined || route.inbound !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['outbound'], message: 'An outbound route has "outbound" and no "inbound".' });
    }
    if (route.kind === 'inbound' && route.mode === 'live' && route.inbound?.upstream.startsWith('http:')) {
      ctx.addIssue({
        code: 'custom',
        path: ['inbound', 'upstream'],
        message: 'A live route sends card-free requests upstream over https only.',
      });
    }
  });

export type RouteDocument = z.output<typeof routeDocumentSchema>;
export type RouteDocumentInput = z.input<typeof routeDocumentSchema>;

/** A refusal of a document, with where in it: `routes[1].filters[0].pointer: …`. */
export class RouteDocumentError extends Error {}

function describeIssue(issue: z.core.$ZodIssue, prefix: string): string {
  const at = [prefix, ...issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))].join('').replace(/^\./, '');
  return at === '' ? issue.message : `${at}: ${issue.message}`;
}

/** One document, checked; the first problem as a RouteDocumentError naming where it is. */
export function parseRouteDocument(value: unknown, where = ''): RouteDocument {
  const parsed = routeDocumentSchema.safeParse(value);
  if (!parsed.success) throw new RouteDocumentError(describeIssue(parsed.error.issues[0]!, where));
  return parsed.data;
}

/**
 * The routes in a file, YAML or JSON (JSON is YAML): one route, a list of routes, `{ routes: [...] }`,
 * or several YAML documents separated by `---`. Ids must be unique within the file.
 */
export function parseRouteFile(text: string): RouteDocument[] {
  const documents = parseAllDocuments(text);
  const values: unknown[] = [];
  for (const doc of Array.isArray(documents) ? documents : [documents]) {
    if (doc.errors.length > 0) throw new RouteDocumentError(`not YAML or JSON: ${doc.errors[0]!.message.split('\n')[0]}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    if (Array.isArray(value)) values.push(...(value as unknown[]));
    else if (typeof value === 'object' && 'routes' in value && Object.keys(value).length === 1) {
      const list = (value as { routes: unknown }).routes;
      if (!Array.isArray(list)) throw new RouteDocumentError('"routes" must be a list of routes.');
      values.push(...(list as unknown[]));
    } else values.push(value);
  }
  if (values.length === 0) throw new RouteDocumentError('the file holds no route.');
  const routes = values.map((value, i) => parseRouteDocument(value, values.length > 1 ? `routes[${i}]` : ''));
  const seen = new Set<string>();
  for (const route of routes) {
    if (seen.has(route.id)) throw new RouteDocumentError(`route id "${route.id}" appears twice in the file.`);
    seen.add(route.id);
  }
  return routes;
}
