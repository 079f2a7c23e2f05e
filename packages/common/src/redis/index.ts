export * from './client';
export * from './commandDeadline';
export * from './scripts';
export * from './unavailable';
export * from './acknowledgedWrite';
