import { TesseraError } from '@tessera/common';
import { parseUpstreamMethod } from './method';

describe('parseUpstreamMethod', () => {
  it('takes any token method as given', () => {
    for (const method of ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE', 'PROPFIND', 'QUERY']) {
      expect(parseUpstreamMethod(method)).toBe(method);
    }
  });

  it('refuses CONNECT, TRACE and anything that is not a token, as a bad method parameter', () => {
    for (const method of ['CONNECT', 'TRACE', 'trace', 'TRACK', '', 'GET /', 'GE\r\nT']) {
      expect(() => parseUpstreamMethod(method)).toThrow(
        expect.objectContaining({ code: 'parameter_invalid', param: 'method' }) as TesseraError,
      );
    }
  });
});
