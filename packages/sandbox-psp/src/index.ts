export { createSandboxPsp, listen } from './server';
export { decideCharge } from './charges';
export { sandboxPspConfigSchema } from './config';
export { ensureSandboxCertificate, type SandboxCertificate } from './certificate';
