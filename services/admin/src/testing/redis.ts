// The stores' helper, under the name the admin service's tests know it by.
export { useStoreRedis as useAdminRedis, type StoreRedis as AdminRedis } from '../../../../packages/merchant-data/src/testing/redis';
