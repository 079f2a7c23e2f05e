export * from './domain/routeDocument';
export * from './domain/inboundAddress';
export * from './domain/bodySegments';
export * from './domain/filterEngine';
export * from './domain/dryRun';
export * from './domain/routesDoc';
export * from './store/routeStore';
