import type { Request, Response } from 'express';
import { apiKeyOf, contextOf, setServiceHeaders } from '@tessera/edge';
import type { ForwardProxyVault } from '../app/ports';

/**
 * GET /v1/forward-proxy/ca.pem (secret key): the merchant's forward-proxy CA certificate, the one
 * its PSP clients trust (docs/proxies.md). Public material, but per merchant: made by the vault on
 * first use, and naming the merchant.
 */
export function forwardProxyCaRoute(vault: Pick<ForwardProxyVault, 'caCertificatePem'>) {
  return async (_req: Request, res: Response): Promise<void> => {
    const pem = await vault.caCertificatePem(apiKeyOf(res).merchantId, { requestId: contextOf(res).requestId });
    setServiceHeaders(res);
    res.setHeader('content-type', 'application/x-pem-file');
    res.setHeader('content-disposition', 'attachment; filename="tessera-forward-proxy-ca.pem"');
    res.setHeader('content-length', Buffer.byteLength(pem));
    res.status(200).end(pem);
  };
}
