/**
 * What any process may need of its parent's environment, whatever it is: where programs and the
 * home directory are, the temporary directory, time zone and locale, and Node's own options.
 */
export const PROCESS_BASICS = ['PATH', 'HOME', 'TMPDIR', 'TZ', 'LANG', 'LC_ALL', 'NODE_OPTIONS', 'NODE_EXTRA_CA_CERTS'] as const;

/**
 * The environment of one process of the local stack: the basics, the variables of `variables`
 * (the names its own configuration reads) that `parent` sets, then `own` over them (a value of
 * undefined removes the variable). Nothing else of `parent` passes, so a secret meant for one
 * service (REDIS_URL, VAULT_KEYS, API_KEY_PEPPER) never reaches a process that does not read it.
 */
export function ownEnvironment(
  parent: NodeJS.ProcessEnv,
  variables: Iterable<string>,
  own: NodeJS.ProcessEnv = {},
): Record<string, string> {
  const result: Record<string, string> = {};
  for (const name of [...PROCESS_BASICS, ...variables]) {
    const value = parent[name];
    if (value !== undefined) result[name] = value;
  }
  for (const [name, value] of Object.entries(own)) {
    if (value === undefined) delete result[name];
    else result[name] = value;
  }
  return result;
}
