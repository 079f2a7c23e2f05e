import { proxyCallerPolicy } from './server';

const names = { gatewayName: 'gateway', fieldsName: 'fields' };

/** The RPCs each identity may call under `policy`. */
function allowedFor(policy: Record<string, string[]>, identity: string): string[] {
  return Object.entries(policy)
    .filter(([, callers]) => callers.includes(identity))
    .map(([rpc]) => rpc)
    .sort();
}

describe('proxyCallerPolicy', () => {
  it('lets nobody call ForwardUpstream without TLS_PEER_INBOUND', () => {
    const policy = proxyCallerPolicy(names);
    expect(policy.ForwardUpstream).toEqual([]);
  });

  it('lets the inbound identity call ForwardUpstream and nothing else, and no other identity call ForwardUpstream', () => {
    const policy = proxyCallerPolicy({ ...names, inboundName: 'inbound' });
    expect(allowedFor(policy, 'inbound')).toEqual(['ForwardUpstream']);
    expect(allowedFor(policy, 'fields')).toEqual(['CallCompletion']);
    expect(allowedFor(policy, 'gateway')).not.toContain('ForwardUpstream');
  });
});
