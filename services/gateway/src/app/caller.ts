/** Who acts in a use case: recorded in the audit log, and limited to the merchants they may manage. */
export interface Caller {
  actor: { id: string; email: string };
  /** The caller's address for the audit log; undefined for the CLI. */
  ip: string | undefined;
  /** The one merchant the caller acts for; null: any (platform operators, the CLI). */
  merchantId: string | null;
}
