export * from './errors';
export * from './grpcErrors';
export * from './config';
export * from './logger';
export * from './devSecrets';
export * from './card';
export * from './net/cidr';
export * from './tlsConfig';
