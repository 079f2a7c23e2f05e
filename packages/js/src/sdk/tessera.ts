/**
 * tessera.js: runs on the merchant's page. It frames the card fields (served from the fields
 * origin), talks to them over a private MessageChannel, and gives the page events and a token.
 * It never sees a card number or CVC: those stay inside the iframe, which the page cannot read.
 */
import {
  isOrigin,
  parseAcceptedBrands,
  parseCvcSessionGrant,
  parseEvent,
  parseHello,
  parseRefused,
  PROTOCOL_VERSION,
  type AcceptedBrand,
  type ConnectMessage,
  type CvcResult,
  type CvcSessionGrant,
  type FieldsCommand,
  type FieldsDisplayOptions,
  type RefusalCode,
  type TokenizeResult,
} from '../shared/protocol';
import { errorTypeOf, TesseraError, type TesseraErrorCode } from '../shared/errors';
import { checkFieldsStyle, type FieldsStyle } from '../shared/style';
import { checkPresentation, presentationOptionsOf } from '../shared/appearance';
import { isLocaleOption, LOCALE_TEXTS, resolveLocale, type Locale } from '../shared/locale';
import { startPageReports } from './pageReport';
import { warnIfUnreadable } from './contrastHint';
import type {
  CardFields,
  CardFieldsEventMap,
  CardFieldsEventName,
  CardFieldsOptions,
  CvcField,
  FieldsFrame,
  TesseraFactory,
  TesseraInstance,
  TesseraOptions,
} from '../shared/api';

export { TesseraError } from '../shared/errors';

const PUBLISHABLE_KEY = /^tpk_(test|live)_[0-9A-Za-z]{38}$/;
const TOKENIZE_TIMEOUT_MS = 60_000;
/**
 * The iframe says hello from its script, before its `load` event: a frame that loaded without a
 * hello is something else (the browser's error page for a frame-ancestors refusal, a page the
 * merchant's CSP or a proxy put there). A few seconds of grace cover a slow message queue.
 */
const LOAD_GRACE_MS = 5_000;
/** A frame that has not even loaded by then (a fields origin that does not answer) has failed too. */
const MOUNT_TIMEOUT_MS = 30_000;
const FIELDS_PATH = '/fields/v1/card';
/** Marks our iframes, so one container never holds two sets of fields (also across two copies of tessera.js). */
const FRAME_MARK = 'data-tessera-fields';

/** Why the fields origin refused the frame, for the page's developer (the frame itself tells the shopper). */
const REFUSAL_MESSAGES: Record<RefusalCode, string> = {
  api_key_invalid: 'Tessera: the publishable key is unknown, revoked or expired: the card fields refused to load.',
  origin_not_allowed:
    'Tessera: this page’s origin is not one of the publishable key’s allowed origins, so the card fields refused to load here. ' +
    'Add it to the key (npm run keys -- restrict <key id> --origin …), or open the page on an allowed origin.',
  fields_unavailable: 'Tessera: the card fields are temporarily unavailable. Try again in a moment.',
};

const LOAD_FAILED_MESSAGE =
  'Tessera: the card fields did not load. Check that the page’s origin is one of the key’s allowed origins, that its ' +
  'Content-Security-Policy allows the fields origin in frame-src, and that the fields origin can be reached.';

/** The frame behind both the card fields and the CVC-only field: lifecycle, events, and one submission call. */
interface FieldsFrameWithSubmit extends FieldsFrame<FieldsFrameWithSubmit> {
  update(options: FrameOptions): void;
  tokenize(): Promise<FrameResult>;
}

/** Everything but the container: what a frame is created with and `update()` changes. */
type FrameOptions = Omit<CardFieldsOptions, 'container'>;

// Read while the script runs: afterwards document.currentScript is another script or null.
const scriptOrigin = (() => {
  const script = document.currentScript as HTMLScriptElement | null;
  try {
    return script?.src ? new URL(script.src).origin : undefined;
  } catch {
    return undefined;
  }
})();

function randomNonce(): string {
  const bytes = new Uint8Array(18);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_');
}

function containerOf(container: string | Element): Element {
  const element = typeof container === 'string' ? document.querySelector(container) : container;
  if (!(element instanceof Element)) throw new TesseraError('container_not_found', `Tessera: no element matches ${String(container)}`);
  return element;
}

/** What a frame's submission resolves with: the card fields' tokenize result, or the CVC-only field's. */
type FrameResult = TokenizeResult | CvcResult;

/** The fields' language as this page's browser resolves it (the iframe resolves 'auto' again, in the same browser). */
function localeOf(options: FrameOptions): Locale {
  return resolveLocale(options.locale, navigator.languages ?? []);
}

/** The iframe's title: the merchant's, else ours in the fields' language. */
function titleOf(options: FrameOptions): string {
  return options.title ?? LOCALE_TEXTS[localeOf(options)].frameTitle;
}

/** The options as the iframe receives them (connect and update); throws on a style or brand list it would refuse. */
function displayOptionsOf(options: FrameOptions): FieldsDisplayOptions {
  const style = checkFieldsStyle(options.style);
  if (!style.ok) throw new TesseraError('invalid_style', `Tessera: ${style.message}`);
  let acceptedBrands: AcceptedBrand[] | undefined;
  if (options.acceptedBrands !== undefined) {
    acceptedBrands = parseAcceptedBrands(options.acceptedBrands);
    if (acceptedBrands === undefined) {
      throw new TesseraError(
        'invalid_accepted_brands',
        'Tessera: acceptedBrands must list one or more distinct brands (visa, mastercard, amex, discover, diners, jcb, unionpay, maestro).',
      );
    }
  }
  // Theme, texts and language (shared/appearance.ts), contrast included; the iframe checks them again.
  const presentation = checkPresentation(presentationOptionsOf(options));
  if (!presentation.ok) throw new TesseraError(presentation.code, `Tessera: ${presentation.message}`);
  const display: FieldsDisplayOptions = {
    style: style.style as FieldsStyle,
    holderName: options.holderName === true,
    ...(Object.keys(presentation.presentation).length > 0 ? { presentation: presentation.presentation } : {}),
  };
  return acceptedBrands === undefined ? display : { ...display, acceptedBrands: [...acceptedBrands] };
}

/** One mount: its iframe and the state of its handshake. Unmount throws it away; mount makes a new one. */
interface Mounted {
  iframe: HTMLIFrameElement;
  nonce: string;
  port?: MessagePort;
  ready: boolean;
  /** Why this frame cannot work (refused, or not loaded): emitted once, and every tokenize() rejects with it. */
  failure?: TesseraError;
  helloSeen: boolean;
  timers: number[];
  onWindowMessage(event: MessageEvent): void;
}

/**
 * The card fields, or with `cvcSession` the same frame showing the CVC input only (see CvcField):
 * created unmounted; mount() frames them in a container, unmount() removes the frame (handlers and
 * options stay), destroy() ends them.
 */
function createFieldsFrame(
  publishableKey: string,
  fieldsOrigin: string,
  { container: initialContainer, ...initial }: CardFieldsOptions,
  cvcSession?: CvcSessionGrant,
): FieldsFrameWithSubmit {
  let options: FrameOptions = initial;
  let display = displayOptionsOf(options);
  const handlers: { [E in CardFieldsEventName]: Set<(payload: CardFieldsEventMap[E]) => void> } = {
    ready: new Set(),
    focus: new Set(),
    blur: new Set(),
    change: new Set(),
    error: new Set(),
    submit: new Set(),
  };
  const pending = new Map<number, { resolve: (r: FrameResult) => void; reject: (e: TesseraError) => void; timer: number }>();
  /** The one success message this frame may send: a CVC-only frame never makes a token, the card fields never attach a CVC. */
  const success = cvcSession === undefined ? 'tokenized' : 'cvc_attached';
  let mounted: Mounted | undefined;
  let destroyed = false;
  let nextId = 1;

  const destroyedError = (): TesseraError =>
    new TesseraError('destroyed', 'Tessera: these card fields were destroyed; create new ones with cardFields().');
  function alive(): void {
    if (destroyed) throw destroyedError();
  }

  function emit<E extends CardFieldsEventName>(event: E, payload: CardFieldsEventMap[E]): void {
    for (const handler of handlers[event]) {
      try {
        handler(payload);
      } catch (err) {
        setTimeout(() => {
          throw err;
        });
      }
    }
  }

  function rejectPending(error: TesseraError): void {
    for (const [id, call] of pending) {
      clearTimeout(call.timer);
      call.reject(error);
      pending.delete(id);
    }
  }

  /** The frame cannot work: once per mount, an `error` event, and tokenize() rejects with the same error from now on. */
  function fail(mount: Mounted, error: TesseraError): void {
    if (mounted !== mount || mount.failure !== undefined || mount.ready) return;
    mount.failure = error;
    for (const timer of mount.timers) clearTimeout(timer);
    rejectPending(error);
    emit('error', error);
  }

  function onEvent(mount: Mounted, event: MessageEvent): void {
    const message = parseEvent(event.data);
    if (message === undefined || mounted !== mount) return;
    switch (message.type) {
      case 'ready':
        mount.ready = true;
        emit('ready', {});
        return;
      case 'submit':
        emit('submit', {});
        return;
      case 'focus':
      case 'blur':
        emit(message.type, { field: message.field });
        return;
      case 'change': {
        const { type: _type, ...payload } = message;
        emit('change', payload);
        return;
      }
      case 'resize':
        mount.iframe.style.height = `${message.height}px`;
        return;
      case 'tokenized':
      case 'cvc_attached':
      case 'tokenize_failed': {
        const call = pending.get(message.id);
        if (call === undefined || (message.type !== 'tokenize_failed' && message.type !== success)) return;
        pending.delete(message.id);
        clearTimeout(call.timer);
        if (message.type !== 'tokenize_failed') return call.resolve(message.result);
        const { code, message: text, type, retryAfter } = message.error;
        // Codes come from the API too, which may add some: the type says what kind they are.
        call.reject(
          new TesseraError(code as TesseraErrorCode, text, {
            type: type ?? errorTypeOf(code),
            ...(retryAfter === undefined ? {} : { retryAfter }),
          }),
        );
        return;
      }
    }
  }

  /**
   * The iframe's first word, from our iframe's window on the fields origin with our nonce: its hello
   * (we answer with the private port), or the refusal page's `tessera:refused`.
   */
  function onWindowMessage(mount: Mounted, event: MessageEvent): void {
    if (event.source !== mount.iframe.contentWindow || event.origin !== fieldsOrigin || mounted !== mount) return;
    const refused = parseRefused(event.data);
    if (refused !== undefined && refused.nonce === mount.nonce) {
      window.removeEventListener('message', mount.onWindowMessage);
      return fail(mount, new TesseraError(refused.code, REFUSAL_MESSAGES[refused.code]));
    }
    const hello = parseHello(event.data);
    if (hello === undefined || hello.nonce !== mount.nonce || mount.iframe.contentWindow === null) return;
    window.removeEventListener('message', mount.onWindowMessage);
    mount.helloSeen = true;
    // A hello after the watchdog gave up (a very slow frame): it works after all.
    mount.failure = undefined;
    for (const timer of mount.timers) clearTimeout(timer);
    const channel = new MessageChannel();
    mount.port = channel.port1;
    mount.port.onmessage = (e) => onEvent(mount, e);
    const connect: ConnectMessage = {
      type: 'tessera:connect',
      v: PROTOCOL_VERSION,
      nonce: mount.nonce,
      ...display,
      ...(cvcSession === undefined ? {} : { cvcSession }),
    };
    mount.iframe.contentWindow.postMessage(connect, fieldsOrigin, [channel.port2]);
  }

  const command = (message: FieldsCommand): void => mounted?.port?.postMessage(message);

  function mount(target: string | Element): void {
    alive();
    if (mounted !== undefined) {
      throw new TesseraError(
        'already_mounted',
        'Tessera: these card fields are already mounted; call unmount() before mounting them elsewhere.',
      );
    }
    const container = containerOf(target);
    if (Array.from(container.children).some((child) => child.hasAttribute(FRAME_MARK))) {
      throw new TesseraError(
        'container_has_fields',
        'Tessera: this container already holds card fields; unmount() or destroy() them first, or use another container.',
      );
    }
    // Without an appearance the built-in look is for light pages: say so in the console if this one is dark.
    if (options.appearance === undefined) warnIfUnreadable(container);
    const nonce = randomNonce();
    const iframe = document.createElement('iframe');
    // The query tells the server the key and the page's claimed origin (it answers a refusal page
    // the frame can show when they do not fit; frame-ancestors still enforces the real parent).
    // The fragment never leaves the browser.
    // The page is served in the language the iframe will pick (it resolves 'auto' itself, from the same browser).
    const query = new URLSearchParams({ key: publishableKey, locale: localeOf(options) });
    if (isOrigin(location.origin)) query.set('origin', location.origin);
    const fragment = new URLSearchParams({ nonce, origin: location.origin });
    iframe.src = `${fieldsOrigin}${FIELDS_PATH}?${query}#${fragment}`;
    iframe.title = titleOf(options);
    iframe.setAttribute(FRAME_MARK, '');
    iframe.setAttribute('frameborder', '0');
    iframe.setAttribute('scrolling', 'no');
    const height = cvcSession !== undefined ? 90 : options.holderName ? 230 : 160;
    iframe.style.cssText = `border:0;width:100%;display:block;overflow:hidden;height:${height}px;`;
    const current: Mounted = {
      iframe,
      nonce,
      ready: false,
      helloSeen: false,
      timers: [],
      onWindowMessage: (event) => onWindowMessage(current, event),
    };
    const loadFailed = (): void => fail(current, new TesseraError('fields_load_failed', LOAD_FAILED_MESSAGE));
    iframe.addEventListener('load', () => {
      if (current.helloSeen || current.failure !== undefined) return;
      // The last load counts (an initial about:blank may fire one first).
      current.timers.push(window.setTimeout(loadFailed, LOAD_GRACE_MS));
    });
    current.timers.push(window.setTimeout(loadFailed, MOUNT_TIMEOUT_MS));
    window.addEventListener('message', current.onWindowMessage);
    mounted = current;
    container.appendChild(iframe);
  }

  /** Takes the frame away; its pending calls reject with `error`. */
  function teardown(error: TesseraError): void {
    const current = mounted;
    if (current === undefined) return;
    mounted = undefined;
    window.removeEventListener('message', current.onWindowMessage);
    for (const timer of current.timers) clearTimeout(timer);
    current.port?.close();
    rejectPending(error);
    current.iframe.remove();
  }

  const fields: FieldsFrameWithSubmit = {
    on(event, handler) {
      alive();
      handlers[event].add(handler);
      return fields;
    },
    off(event, handler) {
      alive();
      handlers[event].delete(handler);
      return fields;
    },
    mount,
    unmount() {
      alive();
      teardown(new TesseraError('fields_not_ready', 'Tessera: the card fields were unmounted.'));
    },
    update(changes) {
      alive();
      const next = { ...options, ...changes };
      // Checked before anything changes: a refused update leaves the fields as they were.
      const nextDisplay = displayOptionsOf(next);
      options = next;
      display = nextDisplay;
      if (mounted !== undefined) mounted.iframe.title = titleOf(options);
      // Before the handshake there is no port yet: the connect will carry the new options.
      command({ type: 'update', options: display });
    },
    tokenize() {
      if (destroyed) return Promise.reject(destroyedError());
      const current = mounted;
      if (current === undefined) {
        return Promise.reject(
          new TesseraError('fields_not_ready', 'Tessera: the card fields are not mounted (call mount(container) first).'),
        );
      }
      if (current.failure !== undefined) return Promise.reject(current.failure);
      if (!current.ready || current.port === undefined) {
        return Promise.reject(new TesseraError('fields_not_ready', 'Tessera: the card fields have not loaded yet (wait for "ready").'));
      }
      const id = nextId++;
      return new Promise<FrameResult>((resolve, reject) => {
        const timer = window.setTimeout(() => {
          pending.delete(id);
          reject(new TesseraError('timeout', 'Tessera: the card fields did not answer in time.'));
        }, TOKENIZE_TIMEOUT_MS);
        pending.set(id, { resolve, reject, timer });
        command({ type: 'tokenize', id });
      });
    },
    focus() {
      alive();
      command({ type: 'focus' });
    },
    clear() {
      alive();
      command({ type: 'clear' });
    },
    destroy() {
      if (destroyed) return;
      teardown(new TesseraError('destroyed', 'Tessera: the card fields were removed.'));
      destroyed = true;
      for (const set of Object.values(handlers)) set.clear();
    },
  };
  if (initialContainer !== undefined) mount(initialContainer);
  return fields;
}

/** What the page holds: the frame's methods, `on`/`off` chaining on the page's object, and its own submission call. */
function facadeOf<Self extends FieldsFrame<Self>>(frame: FieldsFrameWithSubmit, own: Omit<Self, keyof FieldsFrame<Self>>): Self {
  const self = {
    ...own,
    mount: frame.mount,
    unmount: frame.unmount,
    focus: frame.focus,
    clear: frame.clear,
    destroy: frame.destroy,
    on<E extends CardFieldsEventName>(event: E, handler: (payload: CardFieldsEventMap[E]) => void) {
      frame.on(event, handler);
      return self;
    },
    off<E extends CardFieldsEventName>(event: E, handler: (payload: CardFieldsEventMap[E]) => void) {
      frame.off(event, handler);
      return self;
    },
  } as unknown as Self;
  return self;
}

export function Tessera(publishableKey: string, options: TesseraOptions = {}): TesseraInstance {
  if (typeof publishableKey === 'string' && publishableKey.startsWith('tsk_')) {
    // Refused before anything is sent: a secret key in a web page must be revoked, not used.
    throw new TesseraError(
      'secret_key_in_browser',
      'Tessera: this is a secret key (tsk_…). Never put it in a web page: revoke it and use a publishable key (tpk_…).',
    );
  }
  if (typeof publishableKey !== 'string' || !PUBLISHABLE_KEY.test(publishableKey)) {
    throw new TesseraError('invalid_publishable_key', 'Tessera: pass a publishable key (tpk_test_… or tpk_live_…).');
  }
  const fieldsOrigin = options.fieldsOrigin ?? scriptOrigin;
  if (!isOrigin(fieldsOrigin)) {
    throw new TesseraError('fields_origin_unknown', 'Tessera: load tessera.js from the fields origin, or pass { fieldsOrigin }.');
  }
  if (options.locale !== undefined && !isLocaleOption(options.locale)) {
    throw new TesseraError('invalid_locale', `Tessera: locale must be one of auto, en, de, fr, es, nl (not ${String(options.locale)})`);
  }
  /** The instance's locale, where the field's own options name none. */
  const withLocale = <O extends { locale?: TesseraOptions['locale'] }>(fieldOptions: O): O =>
    fieldOptions.locale === undefined && options.locale !== undefined ? { ...fieldOptions, locale: options.locale } : fieldOptions;
  if (options.pageReport !== false) startPageReports(publishableKey, fieldsOrigin); // SAQ A kit: the page's scripts, for the inventory.
  return {
    cardFields: (fieldsOptions = {}) => {
      const frame = createFieldsFrame(publishableKey, fieldsOrigin, withLocale(fieldsOptions));
      // The card fields' frame answers only 'tokenized' (see `success`).
      return facadeOf<CardFields>(frame, { update: frame.update, tokenize: () => frame.tokenize() as Promise<TokenizeResult> });
    },
    cvcField: ({ cvcSession, ...fieldOptions }) => {
      const grant = parseCvcSessionGrant(cvcSession);
      if (grant === undefined) {
        throw new TesseraError(
          'cvc_session_required',
          'Tessera: cvcField needs a CVC session ({ token, secret }) your server opened with POST /v1/token/{token}/cvc-sessions.',
        );
      }
      const frame = createFieldsFrame(publishableKey, fieldsOrigin, withLocale(fieldOptions), grant);
      // The CVC-only frame answers only 'cvc_attached' (see `success`).
      return facadeOf<CvcField>(frame, { update: frame.update, submit: () => frame.tokenize() as Promise<CvcResult> });
    },
  };
}

Tessera.TesseraError = TesseraError;

(window as unknown as { Tessera: TesseraFactory }).Tessera = Tessera;
