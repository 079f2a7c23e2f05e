import { stringify } from 'yaml';
import { z } from 'zod';
import { isTestCard, TesseraError } from '@tessera/common';
import type { AuditLog } from '@tessera/merchant-data';
import {
  dryRunRoute,
  findCardData,
  parseRouteDocument,
  parseRouteFile,
  RouteAddressTakenError,
  RouteDocumentError,
  RouteLimitError,
  ROUTE_ID_PATTERN,
  type DryRunResult,
  type RouteDocument,
  type RouteStore,
  type StoredRoute,
} from '@tessera/routes';
import { auditAs, type Caller } from './caller';
import { listMerchants, merchantIdSchema, merchantInReach, merchantQuerySchema } from './merchants';

/**
 * The merchants' proxy routes (docs/routes.md): list, show, apply (create or replace), delete and
 * dry-run. Called by the admin API (and so the dashboard) and `npm run routes`, like app/apiKeys.ts.
 * Route documents hold no card data; a dry run's sample may, so its answer is masked
 * (@tessera/routes' dryRun.ts) and the sample is neither stored nor audited.
 */
export interface ProxyRouteDeps {
  routes: RouteStore;
  audit: Pick<AuditLog, 'append'>;
  now: () => Date;
}

export const routeIdSchema = () =>
  z.string().regex(ROUTE_ID_PATTERN, { error: 'A route id is 1-64 lower-case letters, digits, "_" or "-".' });

/** `/merchants/{merchantId}/routes/{routeId}` */
export const routePathSchema = z.object({ merchantId: merchantIdSchema(), routeId: routeIdSchema() });

/** The dry run's sample request; the admin API's body limit (32 KiB) bounds it. */
export const dryRunRequestSchema = z.strictObject({
  contentType: z.string({ error: '"contentType" must be a string.' }).max(200).default('application/json').meta({
    description: "The sample request's Content-Type: `application/json`, `application/x-www-form-urlencoded`, anything else is text.",
  }),
  body: z.string({ error: '"body" must be a string: the sample request body.' }).meta({ description: 'The sample request body, as sent.' }),
});
export type DryRunRequest = z.output<typeof dryRunRequestSchema>;

/** A route document as given, checked; a 400 that says where the problem is. `routeId`: the path's, which the document must repeat. */
export function parseRouteInput(raw: unknown, routeId?: string): RouteDocument {
  let route: RouteDocument;
  try {
    route = parseRouteDocument(raw);
  } catch (err) {
    if (err instanceof RouteDocumentError) throw new TesseraError('parameter_invalid', { message: err.message });
    throw err;
  }
  if (routeId !== undefined && route.id !== routeId) {
    throw new TesseraError('parameter_invalid', {
      param: 'id',
      message: `The document's "id" (${route.id}) is not the route in the path (${routeId}).`,
    });
  }
  return route;
}

export async function listProxyRoutes(deps: Pick<ProxyRouteDeps, 'routes'>, caller: Caller, merchantId: string): Promise<StoredRoute[]> {
  merchantInReach(caller, merchantId);
  return deps.routes.list(merchantId);
}

export async function getProxyRoute(
  deps: Pick<ProxyRouteDeps, 'routes'>,
  caller: Caller,
  merchantId: string,
  routeId: string,
): Promise<StoredRoute> {
  merchantInReach(caller, merchantId);
  const stored = await deps.routes.get(merchantId, routeId);
  if (stored === undefined) throw new TesseraError('proxy_route_not_found', { param: 'routeId' });
  return stored;
}

/** The top-level fields of a route that differ, in document order: what `apply` shows and the audit records. */
export function changedFields(before: RouteDocument | undefined, after: RouteDocument): string[] {
  if (before === undefined) return [];
  const keys = [...new Set([...Object.keys(after), ...Object.keys(before)])] as (keyof RouteDocument)[];
  return keys.filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
}

export interface AppliedRoute {
  stored: StoredRoute;
  outcome: 'created' | 'updated' | 'unchanged';
  /** For `updated`: the top-level fields that changed. */
  changed: string[];
}

/** Creates or replaces a route; an identical document is left alone (and not audited). Applies from the next request. */
export async function applyProxyRoute(
  deps: ProxyRouteDeps,
  caller: Caller,
  merchantId: string,
  route: RouteDocument,
): Promise<AppliedRoute> {
  merchantInReach(caller, merchantId);
  const existing = await deps.routes.get(merchantId, route.id);
  const changed = changedFields(existing?.route, route);
  if (existing !== undefined && changed.length === 0) return { stored: existing, outcome: 'unchanged', changed };
  let stored: StoredRoute;
  try {
    ({ stored } = await deps.routes.put(merchantId, route, deps.now()));
  } catch (err) {
    if (err instanceof RouteLimitError) throw new TesseraError('proxy_route_limit_reached');
    if (err instanceof RouteAddressTakenError) {
      throw new TesseraError('proxy_route_address_taken', {
        param: err.address.startsWith('host:') ? 'inbound.host' : 'inbound.path',
        message: `Another inbound route already serves ${err.address.startsWith('host:') ? 'the host' : 'the path'} ${err.address.slice(5)}; paths and hosts are unique across Tessera: choose another.`,
      });
    }
    throw err;
  }
  const outcome = existing === undefined ? 'created' : 'updated';
  await auditAs(deps, caller, {
    action: 'route.applied',
    merchantId,
    details: { routeId: route.id, kind: route.kind, mode: route.mode, outcome, changed },
  });
  return { stored, outcome, changed };
}

export async function deleteProxyRoute(deps: ProxyRouteDeps, caller: Caller, merchantId: string, routeId: string): Promise<void> {
  merchantInReach(caller, merchantId);
  if (!(await deps.routes.delete(merchantId, routeId))) throw new TesseraError('proxy_route_not_found', { param: 'routeId' });
  await auditAs(deps, caller, { action: 'route.deleted', merchantId, details: { routeId } });
}

/** What a sample request becomes on a stored route: placeholders and masked values only. */
export async function dryRunProxyRoute(
  deps: Pick<ProxyRouteDeps, 'routes'>,
  caller: Caller,
  merchantId: string,
  routeId: string,
  request: DryRunRequest,
): Promise<DryRunResult> {
  const { route } = await getProxyRoute(deps, caller, merchantId, routeId);
  const sample = { contentType: request.contentType, body: request.body };
  // The admin service is outside the card data environment: a sample's card numbers are the published test cards.
  if (
    route.kind === 'inbound' &&
    findCardData(sample, route.filters).some((p) => p.store === 'number' && !isTestCard(p.value.replace(/\D/g, '')))
  ) {
    throw new TesseraError('parameter_invalid', {
      param: 'body',
      message:
        'A dry run takes the published test cards only (docs/api.md, test mode): the dashboard is outside the card data environment.',
    });
  }
  return dryRunRoute(route, sample);
}

/**
 * `/admin/v1/routes`: the routes as a file, as `npm run routes -- apply` takes them. `?merchantId=`
 * names the merchant: route documents carry none, so that one file can be applied to a merchant's
 * test and live set-ups alike; a merchant operator's own is the default.
 */
export const routeFileQuerySchema = z.object({
  merchantId: merchantIdSchema()
    .optional()
    .meta({ description: 'The merchant the routes are for; merchant operators: their own (the default). Platform operators: required.' }),
});

/** `/routes/{merchantId}/{routeId}`: the same parameters as the per-merchant paths. */
export const routeFilePathSchema = routePathSchema;

/** `GET /admin/v1/routes?merchantId=`: as the audit log, one merchant or every merchant in reach. */
export const routeListQuerySchema = merchantQuerySchema;

/** The merchant a route file is applied to: named, or the caller's own; a platform operator must name one. */
export function routeFileMerchant(caller: Caller, requested: string | undefined): string {
  const merchantId = merchantInReach(caller, requested);
  if (merchantId === undefined) {
    throw new TesseraError('parameter_missing', {
      param: 'merchantId',
      message: 'Name the merchant the routes are for: ?merchantId=… (route documents carry no merchant).',
    });
  }
  return merchantId;
}

/** The routes in a file (YAML or JSON: one route, a list, `{ routes: [...] }` or `---` documents), all checked; a 400 naming where. */
export function parseRouteFileInput(text: string): RouteDocument[] {
  try {
    return parseRouteFile(text);
  } catch (err) {
    if (err instanceof RouteDocumentError) throw new TesseraError('parameter_invalid', { message: err.message });
    throw err;
  }
}

/** Applies every route of a checked file in order, as `npm run routes -- apply`; each change audited by applyProxyRoute. */
export async function applyProxyRouteFile(
  deps: ProxyRouteDeps,
  caller: Caller,
  merchantId: string,
  routes: RouteDocument[],
): Promise<AppliedRoute[]> {
  merchantInReach(caller, merchantId);
  const applied: AppliedRoute[] = [];
  for (const route of routes) applied.push(await applyProxyRoute(deps, caller, merchantId, route));
  return applied;
}

/** Listing across merchants also needs where the merchant list comes from (listMerchants). */
export type RouteListDeps = Pick<ProxyRouteDeps, 'routes'> & Parameters<typeof listMerchants>[0];

export interface MerchantRoute extends StoredRoute {
  merchantId: string;
}

/**
 * One merchant's routes, or, without one named, those of every merchant the caller manages
 * (listMerchants: a merchant with a key or an operator), by merchant then id.
 */
export async function listProxyRoutesInReach(deps: RouteListDeps, caller: Caller, requested: string | undefined): Promise<MerchantRoute[]> {
  const named = merchantInReach(caller, requested);
  const merchants = named !== undefined ? [named] : await listMerchants(deps, caller);
  const routes: MerchantRoute[] = [];
  for (const merchantId of merchants) {
    for (const stored of await deps.routes.list(merchantId)) routes.push({ merchantId, ...stored });
  }
  return routes;
}

/** A route's document as YAML, as `npm run routes -- show` prints it: what a merchant keeps in git. */
export function routeAsYaml(route: RouteDocument): string {
  return stringify(route);
}
