// A test's private redis-server, flushed between tests (the stores' helper).
export { useStoreRedis as useFieldsRedis, type StoreRedis as FieldsRedis } from '../../../../packages/merchant-data/src/testing/redis';
