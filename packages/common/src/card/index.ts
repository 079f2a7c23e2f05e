export * from './luhn';
export * from './brands';
export * from './testCards';
export * from './expiry';
export * from './cvv';
export * from './validateCard';
export * from './cardNumberLike';
