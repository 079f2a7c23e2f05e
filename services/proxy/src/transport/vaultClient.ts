import {
  batchItemError,
  call,
  createBatcher,
  createVaultClient,
  readinessOverChannel,
  renderRequestToWire,
  renderRouteToWire,
  type RenderRouteRequest,
  type RenderRouteResponse__Output,
  VAULT_SERVICE_NAME,
  type RenderResponse,
  type WireRenderRequest,
  MAX_BATCH_BODY_BYTES,
  type PreviewResponse__Output,
  type RenderBatchItem,
  type RenderBatchResponse,
  type VaultClient,
} from '@tessera/protos';
import type { RenderInput, VaultPort } from '../app/vaultPort';

/** The most Render calls in one RenderBatch call. */
export const MAX_RENDER_BATCH = 64;

/**
 * The vault takes holder names of up to 256 UTF-16 units, and escaping or percent-encoding makes
 * one unit at most 9 bytes (U+FFFF as %EF%BF%BF); every other value is at most 19 digits.
 */
const MAX_FILLED_VALUE_BYTES = 256 * 9;

/**
 * The most bytes a template can render to, whatever card it is filled with. Batches are weighed
 * by this, not by the template: a few small templates of `[CARD_HOLDER]` would otherwise render
 * past the gRPC message limit together, and the whole batch (other merchants' renders, their
 * CVVs already consumed) would fail. A template heavier than any batch renders in its own call.
 */
export function renderedSizeBound(template: string): number {
  let placeholders = 0;
  for (let at = template.indexOf('[CARD_'); at !== -1; at = template.indexOf('[CARD_', at + 1)) placeholders++;
  return Buffer.byteLength(template) + placeholders * MAX_FILLED_VALUE_BYTES;
}

export function createVaultPort(address: string, timeoutMs: number, client: VaultClient = createVaultClient(address)): VaultPort {
  // Renders that arrive together go to the vault as one RenderBatch call (see createBatcher).
  const render = createBatcher<{ request: RenderInput; requestId: string }, Buffer>({
    maxBatch: MAX_RENDER_BATCH,
    maxBatchBytes: MAX_BATCH_BODY_BYTES,
    weigh: ({ request }) => renderedSizeBound(request.template),
    sendOne: async ({ request, requestId }) => {
      // token_not_found, cvv_unavailable and friends come back as the vault raised them.
      const res = await call<WireRenderRequest, RenderResponse>(client, client.Render, renderRequestToWire(request), {
        timeoutMs,
        ...(requestId ? { requestId } : {}),
      });
      // The decoded message's own buffer: a copy would only leave one more copy of card data behind.
      return res.body;
    },
    sendBatch: async (items, deliver) => {
      const { results } = await call<{ items: RenderBatchItem[] }, RenderBatchResponse>(
        client,
        client.RenderBatch,
        { items: items.map(({ request, requestId }) => ({ requestId, request: renderRequestToWire(request) })) },
        { timeoutMs },
      );
      // The decoded message's own buffers, as for a single Render.
      results.forEach((result, i) => deliver(i, result.outcome === 'body' && result.body ? result.body : batchItemError(result)));
    },
  });
  const vaultReadiness = readinessOverChannel(client, VAULT_SERVICE_NAME, 'vault');
  return {
    render: (input, requestId) => render({ request: input, requestId: requestId ?? '' }),
    preview: (input, requestId) =>
      call<WireRenderRequest, PreviewResponse__Output>(client, client.Preview, renderRequestToWire(input), {
        timeoutMs,
        ...(requestId ? { requestId } : {}),
      }),
    // Not batched: a route's body is a whole request (up to the gateway's body limit), not a small template.
    renderRoute: async (input, requestId) => {
      const res = await call<RenderRouteRequest, RenderRouteResponse__Output>(client, client.RenderRoute, renderRouteToWire(input), {
        timeoutMs,
        ...(requestId ? { requestId } : {}),
      });
      return { body: res.body, tokens: res.tokens };
    },
    ready: () => vaultReadiness({ timeoutMs }).catch(() => ({ ready: false, detail: 'vault unreachable' })),
    close() {
      client.close();
    },
  };
}
