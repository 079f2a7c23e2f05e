/**
 * The speed targets `npm run bench` checks (issue 14, round two), printed beside the figures.
 * They are reported, never asserted in tests: a shared 2-core machine cannot promise them.
 */
export const CPU_TARGETS_US = { tokenize: 200, proxy: 400 };
export const FAIR_PROXY_RATIO_TARGET = 0.5;
export const RSS_TARGET_MB = 150;

const f = (n, d = 0) => (n === undefined || Number.isNaN(n) ? '-' : n.toFixed(d));
const verdict = (ok, miss) => (ok ? 'ok' : `MISSED by ${miss}`);

/** CPU per request (all processes), proxy vs the fair baseline, and RSS, each with its target. */
export function targetLines({ cpuAll, ratios, rssPeak }) {
  const lines = ['| target | measured | goal |', '|---|---:|---|'];
  for (const [name, goal] of Object.entries(CPU_TARGETS_US)) {
    const v = cpuAll[name];
    if (v === undefined) continue;
    lines.push(`| CPU µs per ${name} request, all processes | ${f(v)} | <= ${goal} ${verdict(v <= goal, f(v - goal))} |`);
  }
  if (ratios.proxyVsFairProxy !== undefined) {
    const v = ratios.proxyVsFairProxy;
    lines.push(
      `| /v1/proxy throughput / fair Express+undici proxy | ${f(v, 2)} | >= ${FAIR_PROXY_RATIO_TARGET} ${verdict(v >= FAIR_PROXY_RATIO_TARGET, f(FAIR_PROXY_RATIO_TARGET - v, 2))} |`,
    );
  }
  for (const name of ['vault', 'proxy', 'gateway']) {
    const p = rssPeak[name];
    if (!p) continue;
    lines.push(
      `| peak RSS ${name} (largest process) MB | ${f(p.processMaxMb)} | <= ${RSS_TARGET_MB} ${verdict(p.processMaxMb <= RSS_TARGET_MB, f(p.processMaxMb - RSS_TARGET_MB))} |`,
    );
  }
  lines.push('');
  return lines;
}
