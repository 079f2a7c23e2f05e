/**
 * `npm run webhooks` as an operator runs it, on the stack's Redis and pepper: what it creates,
 * rotates and deletes is what the dashboard's admin API shows, and the audit log names the CLI's
 * user for each change, never a secret.
 */
import { spawnSync } from 'node:child_process';
import { loggedIn } from './adminClient';
import { ROOT, useSharedStack } from './harness';

jest.setTimeout(60_000);

const env = useSharedStack();
const merchant = env.merchant('hooks');
const OPERATOR = { email: `ops@${merchant}.test`, password: 'correct-horse-battery' };

/** `npm run --silent webhooks -- …` in the repository, with the stack's environment. */
function webhooks(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync('npm', ['run', '--silent', 'webhooks', '--', ...args], {
    cwd: ROOT,
    env: { ...env.stack.env, PATH: process.env.PATH },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

it('creates, lists, rotates and deletes an endpoint from the CLI; the admin API sees each change and its audit entry', async () => {
  const created = webhooks([
    'create',
    '--merchant',
    merchant,
    '--mode',
    'test',
    '--url',
    'https://shop.example/tessera-events',
    '--events',
    'token.created,form_session.completed',
    '--json',
  ]);
  expect(created).toMatchObject({ status: 0, stderr: '' });
  const endpoint = JSON.parse(created.stdout);
  expect(endpoint).toMatchObject({ id: expect.stringMatching(/^we_/), secret: expect.stringMatching(/^whsec_/), status: 'enabled' });

  const listed = webhooks(['list', '--merchant', merchant, '--mode', 'test']);
  expect(listed.status).toBe(0);
  expect(listed.stdout).toContain(`${endpoint.id}  https://shop.example/tessera-events  token.created,form_session.completed  enabled`);
  expect(listed.stdout).not.toContain('whsec_');

  env.stack.createOperator(OPERATOR.email, OPERATOR.password, merchant);
  const admin = await loggedIn(env.stack.adminUrl, OPERATOR.email, OPERATOR.password);
  const seen = await admin.call('GET', `/merchants/${merchant}/webhook-endpoints?mode=test`);
  expect(seen.status).toBe(200);
  expect(seen.body.data).toEqual([expect.objectContaining({ id: endpoint.id, url: 'https://shop.example/tessera-events' })]);

  const rotated = webhooks(['rotate-secret', '--merchant', merchant, '--mode', 'test', '--endpoint', endpoint.id, '--expires-in', '0s']);
  expect(rotated.status).toBe(0);
  const secrets = rotated.stdout.match(/whsec_\S+/g) ?? [];
  expect(secrets).toHaveLength(1);
  expect(secrets[0]).not.toBe(endpoint.secret);
  expect(rotated.stdout).toContain('The previous one no longer signs.');

  expect(webhooks(['delete', '--merchant', merchant, '--mode', 'test', '--endpoint', endpoint.id]).status).toBe(0);
  expect((await admin.call('GET', `/merchants/${merchant}/webhook-endpoints?mode=test`)).body.data).toEqual([]);
  const gone = webhooks(['enable', '--merchant', merchant, '--mode', 'test', '--endpoint', endpoint.id]);
  expect(gone.status).toBe(1);
  expect(gone.stderr).toContain(`no test webhook endpoint ${endpoint.id}`);

  const audit = await admin.call('GET', `/audit?limit=20`);
  const entries = audit.body.entries.filter((e: { action: string }) => e.action.startsWith('webhook_endpoint.'));
  expect(entries.map((e: { action: string }) => e.action)).toEqual([
    'webhook_endpoint.deleted',
    'webhook_endpoint.secret_rotated',
    'webhook_endpoint.created',
  ]);
  expect(entries.every((e: { actor: string }) => e.actor.startsWith('cli:'))).toBe(true);
  expect(audit.text).not.toContain('whsec_');
});

it('exits 2 with the usage for a live endpoint on http://, and creates nothing', async () => {
  const res = webhooks(['create', '--merchant', merchant, '--mode', 'live', '--url', 'http://shop.example/e', '--events', '*']);
  expect(res.status).toBe(2);
  expect(res.stderr).toContain('--url must be https:// for a live key.');
  expect(webhooks(['list', '--merchant', merchant, '--mode', 'live']).stdout).toContain('No live webhook endpoints');
});
