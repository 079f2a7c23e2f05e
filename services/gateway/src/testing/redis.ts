// The stores' helper, under the name the gateway's tests know it by.
export { useStoreRedis as useGatewayRedis, type StoreRedis as GatewayRedis } from '../../../../packages/merchant-data/src/testing/redis';

export { letTimePass } from '../../../../packages/edge/src/testing/redis';
