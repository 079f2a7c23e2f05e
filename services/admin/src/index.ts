export { adminConfigSchema, parseAdminConfig, type AdminConfig } from './config';
export { createAdminApp, createAdminRouter, type AdminDeps } from './transport/adminRouter';
