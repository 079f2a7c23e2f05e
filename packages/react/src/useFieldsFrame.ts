import { useEffect, useLayoutEffect, useRef, useState, type RefObject } from 'react';
import { isTesseraError } from '@tessera/js';
import type { CardFieldsEventMap, CardFieldsEventName, FieldsLifecycle, TesseraInstance } from './sdk';
import { useTesseraFor } from './TesseraProvider';
import { useLatest } from './useLatest';
import { isEqual } from './isEqual';

/** The event props both components take, one per tessera.js event. */
export interface FieldsEventProps {
  /** The iframe loaded and connected: `tokenize()`/`submit()` work from now on. Again after each remount. */
  onReady?: (event: CardFieldsEventMap['ready']) => void;
  onChange?: (event: CardFieldsEventMap['change']) => void;
  onFocus?: (event: CardFieldsEventMap['focus']) => void;
  onBlur?: (event: CardFieldsEventMap['blur']) => void;
  /** A refusal: origin not allowed, key invalid, the fields could not load, a rate limit, … (`code`, `type`, `message`, `retryAfter?`). */
  onError?: (event: CardFieldsEventMap['error']) => void;
  /** The shopper pressed Enter in the fields. */
  onSubmit?: (event: CardFieldsEventMap['submit']) => void;
}

const EVENT_PROPS: { [E in CardFieldsEventName]: keyof FieldsEventProps } = {
  ready: 'onReady',
  change: 'onChange',
  focus: 'onFocus',
  blur: 'onBlur',
  error: 'onError',
  submit: 'onSubmit',
};

/** A TesseraError goes to onError when the page listens; anything else, or nobody listening, is thrown. */
function reportOrThrow(error: unknown, events: FieldsEventProps): void {
  if (!isTesseraError(error) || events.onError === undefined) throw error;
  events.onError(error);
}

// useLayoutEffect warns when React renders on a server (React 18); there is nothing to mount there anyway.
const useBrowserLayoutEffect = typeof window === 'undefined' ? useEffect : useLayoutEffect;

interface Created<Frame> {
  frame: Frame;
  tessera: TesseraInstance;
  identity: string;
}

/**
 * The lifecycle of one tessera.js frame in a component, after @stripe/react-stripe-js' elements:
 * created once per instance (and per `identity`, e.g. a CVC session), mounted into the component's
 * own div in a layout effect, `update()`d when an option changes, unmounted when the
 * component unmounts and destroyed after that.
 *
 * StrictMode (React 18 and 19) runs the effect, its cleanup and the effect again on the first mount: the
 * cleanup unmounts (the iframe goes) and only schedules the destroy, which the second run cancels
 * and mounts the same frame again. So one frame, one iframe, whatever React does.
 */
export function useFieldsFrame<Frame extends FieldsLifecycle, Options extends object>(
  component: string,
  options: Options,
  identity: string,
  create: (tessera: TesseraInstance, options: Options) => Frame,
  events: FieldsEventProps,
): { container: RefObject<HTMLDivElement | null>; current: () => Frame | null } {
  const tessera = useTesseraFor(component);
  const container = useRef<HTMLDivElement | null>(null);
  const created = useRef<Created<Frame> | null>(null);
  const pendingDestroy = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const latestEvents = useLatest(events);
  const latestOptions = useLatest(options);
  const latestCreate = useLatest(create);
  /** The options the frame has now: what it was created with, then each update. */
  const applied = useRef<Options>(options);
  /** Options tessera.js refused to create fields with; new ones try again (`attempt` re-runs the mount). */
  const refused = useRef<Options | null>(null);
  const [attempt, setAttempt] = useState(0);

  useBrowserLayoutEffect(() => {
    const node = container.current;
    if (tessera === null || node === null) return;
    clearTimeout(pendingDestroy.current);
    let current = created.current;
    if (current !== null && (current.tessera !== tessera || current.identity !== identity)) {
      current.frame.destroy();
      current = null;
    }
    if (current === null) {
      let frame: Frame;
      try {
        frame = latestCreate.current(tessera, latestOptions.current);
      } catch (error) {
        // A refused option (a style tessera.js does not take, an empty brand list): the page's
        // onError shows it, rather than React unmounting the whole checkout; fixed options try again.
        refused.current = latestOptions.current;
        reportOrThrow(error, latestEvents.current);
        return;
      }
      refused.current = null;
      for (const [event, prop] of Object.entries(EVENT_PROPS) as [CardFieldsEventName, keyof FieldsEventProps][]) {
        frame.on(event, (payload: unknown) => (latestEvents.current[prop] as ((p: unknown) => void) | undefined)?.(payload));
      }
      applied.current = latestOptions.current;
      current = { frame, tessera, identity };
      created.current = current;
    }
    current.frame.mount(node);
    const mounted = current;
    return () => {
      mounted.frame.unmount();
      pendingDestroy.current = setTimeout(() => {
        if (created.current !== mounted) return;
        created.current = null;
        mounted.frame.destroy();
      });
    };
  }, [tessera, identity, attempt, latestCreate, latestEvents, latestOptions]);

  // Every render: the options compared by value, so inline objects cost nothing; only what changed
  // goes to update() (a removed option as undefined, which puts its default back), the iframe stays.
  useBrowserLayoutEffect(() => {
    const current = created.current;
    if (current === null) {
      if (refused.current !== null && !isEqual(refused.current, options)) {
        refused.current = null;
        setAttempt((n) => n + 1);
      }
      return;
    }
    if (isEqual(applied.current, options)) return;
    const changes: Record<string, unknown> = {};
    for (const key of new Set([...Object.keys(applied.current), ...Object.keys(options)])) {
      const before = (applied.current as Record<string, unknown>)[key];
      const after = (options as Record<string, unknown>)[key];
      if (!isEqual(before, after)) changes[key] = after;
    }
    applied.current = options;
    try {
      current.frame.update(changes as never);
    } catch (error) {
      reportOrThrow(error, latestEvents.current);
    }
  });

  // One object for the component's life: the handle built on it (useImperativeHandle) stays the same too.
  const [frame] = useState(() => ({ container, current: () => created.current?.frame ?? null }));
  return frame;
}
