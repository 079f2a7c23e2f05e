export { createSandboxPsp, listen } from './server';
export { decideCharge } from './charges';
export { sandboxPspConfigSchema } from './config';
