-- A checkout database made by the release at commit 3a0b7d8 (postgresql), with rows in it, for the upgrade
-- tests (tests/test_schema.py). Made by tests/release_databases/make_dumps.sh: that release's own
-- code (tests/release_databases/make_database.py, run in a worktree of commit 3a0b7d8 with its
-- package and test helpers) made the tables at its start-up and the rows through its pages,
-- webhook receiver and commands on its embedded sandbox; then pg_dump --no-owner --no-privileges (pg_dump (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)) wrote this file.
-- Sessions expire in 2099 (one UPDATE, so that the tests can open them). Ids: 3a0b7d8.postgresql.json.
--
-- PostgreSQL database dump
--

\restrict h1Um5fzLhawdtFhY0CwygI6ZTeYce1ad42XE13NF8VtApgKicEBILUzEXoIVbA3

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: checkout_orders; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkout_orders (
    order_id character varying(128) NOT NULL,
    flow character varying(32),
    status character varying(64) NOT NULL,
    previous_status character varying(64),
    status_updated_at timestamp with time zone,
    status_source character varying(16) NOT NULL,
    order_params text,
    summary json,
    full_order json,
    fetched_at timestamp with time zone,
    hash character varying(256),
    refreshed_at timestamp with time zone NOT NULL,
    version integer NOT NULL,
    fetch_due_at timestamp with time zone,
    fetch_seq integer NOT NULL,
    fetch_attempts integer NOT NULL,
    fetch_error text,
    created_at timestamp with time zone NOT NULL
);


--
-- Name: checkout_sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkout_sessions (
    id character varying(64) NOT NULL,
    flow character varying(16) NOT NULL,
    jti character varying(255),
    csrf_token character varying(64) NOT NULL,
    claims json NOT NULL,
    locked json NOT NULL,
    data json NOT NULL,
    step character varying(32) NOT NULL,
    order_id character varying(64),
    creating_since timestamp with time zone,
    creating_owner character varying(64),
    version integer NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL
);


--
-- Name: checkout_signal_log; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkout_signal_log (
    id bigint NOT NULL,
    order_id character varying(128) NOT NULL,
    status character varying(64) NOT NULL,
    previous_status character varying(64),
    flow character varying(32),
    order_params text,
    event_id bigint,
    created_at timestamp with time zone NOT NULL,
    state character varying(16) NOT NULL,
    claimed_at timestamp with time zone,
    dispatched_at timestamp with time zone,
    attempts integer NOT NULL,
    error text
);


--
-- Name: checkout_signal_log_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.checkout_signal_log_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: checkout_signal_log_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.checkout_signal_log_id_seq OWNED BY public.checkout_signal_log.id;


--
-- Name: checkout_signal_outbox; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkout_signal_outbox (
    id bigint NOT NULL,
    signal character varying(32) NOT NULL,
    event_id bigint NOT NULL,
    duplicate integer NOT NULL,
    created_at timestamp with time zone NOT NULL,
    state character varying(16) NOT NULL,
    claimed_at timestamp with time zone,
    dispatched_at timestamp with time zone,
    attempts integer NOT NULL,
    error text
);


--
-- Name: checkout_signal_outbox_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.checkout_signal_outbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: checkout_signal_outbox_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.checkout_signal_outbox_id_seq OWNED BY public.checkout_signal_outbox.id;


--
-- Name: checkout_webhook_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkout_webhook_events (
    id bigint NOT NULL,
    body_sha256 character varying(64) NOT NULL,
    body bytea NOT NULL,
    headers json NOT NULL,
    received_at timestamp with time zone NOT NULL,
    last_seen_at timestamp with time zone NOT NULL,
    duplicates integer NOT NULL,
    event_type character varying(64),
    order_id character varying(128),
    status character varying(64),
    updated_at timestamp with time zone,
    state character varying(16) NOT NULL,
    outcome character varying(32),
    error text,
    attempts integer NOT NULL,
    processed_at timestamp with time zone,
    received_owed integer DEFAULT 0 NOT NULL
);


--
-- Name: checkout_webhook_events_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.checkout_webhook_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: checkout_webhook_events_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.checkout_webhook_events_id_seq OWNED BY public.checkout_webhook_events.id;


--
-- Name: checkout_signal_log id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkout_signal_log ALTER COLUMN id SET DEFAULT nextval('public.checkout_signal_log_id_seq'::regclass);


--
-- Name: checkout_signal_outbox id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkout_signal_outbox ALTER COLUMN id SET DEFAULT nextval('public.checkout_signal_outbox_id_seq'::regclass);


--
-- Name: checkout_webhook_events id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkout_webhook_events ALTER COLUMN id SET DEFAULT nextval('public.checkout_webhook_events_id_seq'::regclass);


--
-- Data for Name: checkout_orders; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.checkout_orders (order_id, flow, status, previous_status, status_updated_at, status_source, order_params, summary, full_order, fetched_at, hash, refreshed_at, version, fetch_due_at, fetch_seq, fetch_attempts, fetch_error, created_at) FROM stdin;
6b03cbba878de5d4405b1da3	onramp	deposit_awaiting	\N	2026-11-23 05:14:34.263+00	webhook	chk_67b6c3e7581580d24e03ba8e	{"_id": "6b03cbba878de5d4405b1da3", "userId": "ad20d63c4f4011754f898c7a", "userEmail": "ada@example.com", "merchantOrderParams": "chk_67b6c3e7581580d24e03ba8e", "countryIsoCode": "NG", "flow": "regular", "type": "on_ramp", "source": "api", "status": "deposit_awaiting", "deposit": {"paymentChannel": "bank", "currencyType": "fiat", "currencyCode": "NGN", "currencyDetails": {"countryIsoCode": "NG"}, "cashout": {"exchangeRate": 1480.0, "exchangeRateAfterFees": 1522.571514, "amountBeforeFees": 5000.0, "amountAfterFees": 4860.2, "amountBeforeFeesUsd": 3.378378, "amountAfterFeesUsd": 3.283918}}, "payout": {"paymentChannel": "crypto", "currencyType": "crypto", "currencyCode": "USDT", "currencyDetails": {"network": "CELO"}, "cashout": {"exchangeRate": 1.0, "exchangeRateAfterFees": 0.97204, "amountBeforeFees": 3.378378, "amountAfterFees": 3.283918, "amountBeforeFeesUsd": 3.378378, "amountAfterFeesUsd": 3.283918}, "transaction": {"meta": {"toAddress": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"}}}, "createdAt": "2026-11-23T05:14:34.263Z", "updatedAt": "2026-11-23T05:14:34.263Z"}	{"_id": "6b03cbba878de5d4405b1da3", "orderId": "6b03cbba878de5d4405b1da3", "status": "swap_initiated", "date": "2026-11-23T05:14:34.263Z", "createdAt": "2026-11-23T05:14:34.263Z", "updatedAt": "2026-11-23T05:14:34.263Z", "email": "ada@example.com", "localCurrencyAmount": 5000, "currencyIsoCode": "NGN", "countryIsoCode": "NG", "paymentChannel": "bank", "amount": 3.378378, "amountCrypto": 3.283918, "network": "CELO", "asset": "USDT", "address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "orderParams": "chk_67b6c3e7581580d24e03ba8e", "redirectUrl": "http://shop.test/checkout/s/sXrWOC3tfr8XEJ_JavOzp0RC3yqQ9MBPwaSgvNsuwco/return", "expiresAt": "2026-11-23T05:19:34.263Z", "feePercent": 2.5, "feePercentService": 1.5, "feePercentPartner": 1, "feeAmountUsd": 0.08446, "feeAmountLocalCurrency": 125, "feeAmountUsdService": 0.050676, "feeAmountLocalCurrencyService": 75, "feeAmountUsdPartner": 0.033784, "feeAmountLocalCurrencyPartner": 50, "gasAmountUsd": 0.01, "gasAmountLocalCurrency": 14.8, "resumeUrl": "http://shop.test/checkout/sandbox/orders/6b03cbba878de5d4405b1da3", "transferInstructions": {"type": "manual", "transferDetails": [{"id": "recipientBankName", "label": "Bank", "value": "Sandbox Microfinance Bank"}, {"id": "recipientBankAccountNumber", "label": "Account number", "value": "0123456789"}, {"id": "recipientBankAccountName", "label": "Account name", "value": "Checkout Sandbox Agent"}, {"id": "amountToSend", "label": "Amount", "value": "5000 NGN"}, {"id": "bankTransferNarration", "label": "Narration", "value": "405B1DA3", "description": "Type this in the transfer's description field"}], "fieldsToConfirmOrder": [], "instructionsText": "Send exactly 5000 NGN to the account below, with the narration shown, then confirm that you have paid.", "warningText": "Type the narration exactly: a transfer without it cannot be matched to your order."}}	2026-11-23 05:14:34.493672+00	\N	2026-11-23 05:14:34.445932+00	1	\N	1	0	\N	2026-11-23 05:14:34.445932+00
ord_fixture_other	onramp	deposit_received	deposit_awaiting	2026-11-22 01:05:00+00	webhook	shop-ref-9	{"_id": "ord_fixture_other", "userId": "usr_1", "userEmail": "buyer@example.com", "countryIsoCode": "NG", "flow": "regular", "type": "on_ramp", "source": "api", "status": "deposit_received", "deposit": {"paymentChannel": "bank", "currencyType": "fiat", "currencyCode": "NGN"}, "payout": {"paymentChannel": "bank", "currencyType": "crypto", "currencyCode": "USDC"}, "createdAt": "2026-11-22T01:00:00.000Z", "updatedAt": "2026-11-22T01:05:00.000Z", "merchantOrderParams": "shop-ref-9"}	\N	\N	\N	2026-11-23 05:14:34.514563+00	2	\N	2	1	OrderNotAvailable: ORDER_NOT_AVAILABLE	2026-11-23 05:14:34.514563+00
\.


--
-- Data for Name: checkout_sessions; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.checkout_sessions (id, flow, jti, csrf_token, claims, locked, data, step, order_id, creating_since, creating_owner, version, created_at, updated_at, expires_at) FROM stdin;
Zi2G6dOLGSLPBXJyCVu1iuwiJ_WyhAXKULuozkHVpVQ	onramp	GxGRF7buEeQAKOkB-V3ZphZl	Ct2Dddq4xuvpEcfsJTY6uNdOHre7_FhzuNpg-wuk4y8	{"countryIsoCode": "NG", "asset": "USDC", "orderParams": "basket-42", "email": "ada@example.com", "network": "CELO"}	["network"]	{"v": 2, "fields": {}, "answers": {"countryIsoCode": "NG", "paymentChannel": "bank", "carrierCode": null, "asset": "USDT", "currency": "local", "amount": "5000"}, "quote": {"id": "6b03cbba878de5d4405b1da4", "fetched_at": 1795410874.5723574, "params": {"network": "CELO", "asset": "USDT", "currency": "local", "amount": "5000", "countryIsoCode": "NG", "paymentChannel": "bank", "carrierCode": null}, "offer": {"countryIsoCode": "NG", "currencyIsoCode": "NGN", "exchangeRate": 1480, "cryptoExchangeRate": 1480, "paymentChannel": "bank"}, "required_fields": {}, "cashout": {"localCurrencyAmount": 5000, "totalAmountUsd": 3.378378, "withdrawAmountUsd": 3.283918, "totalAmountCrypto": 3.378378, "withdrawAmountCrypto": 3.283918, "feePercent": 2.5, "feePercentService": 1.5, "feePercentPartner": 1, "feeAmountUsd": 0.08446, "feeAmountUsdService": 0.050676, "feeAmountUsdPartner": 0.033784, "feeAmountLocalCurrency": 125, "feeAmountLocalCurrencyService": 75, "feeAmountLocalCurrencyPartner": 50, "feeAmountCrypto": 0.08446, "feeAmountCryptoService": 0.050676, "feeAmountCryptoPartner": 0.033784, "gasAmountUsd": 0.01, "gasAmountLocalCurrency": 14.8}}, "progress": {"done": ["choose"], "answered": ["choose"], "reviewed": false}}	start	\N	\N	\N	2	2026-11-23 05:14:34.556293+00	2026-11-23 05:14:34.5736+00	2099-01-01 00:00:00+00
sXrWOC3tfr8XEJ_JavOzp0RC3yqQ9MBPwaSgvNsuwco	onramp	\N	D_yBKwLP9DzhWklY2-I5D5BLr88Ak0ZtXvYccV3vKzQ	{}	[]	{"v": 2, "answers": {"countryIsoCode": "NG", "paymentChannel": "bank", "carrierCode": null, "network": "CELO", "asset": "USDT", "currency": "local", "amount": "5000", "address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "memo": "", "email": "ada@example.com"}, "fields": {}, "quote": {"id": "6b03cbba878de5d4405b1da0", "fetched_at": 1795410874.0711539, "params": {"network": "CELO", "asset": "USDT", "currency": "local", "amount": "5000", "countryIsoCode": "NG", "paymentChannel": "bank", "carrierCode": null}, "offer": {"countryIsoCode": "NG", "currencyIsoCode": "NGN", "exchangeRate": 1480, "cryptoExchangeRate": 1480, "paymentChannel": "bank"}, "required_fields": {}, "cashout": {"localCurrencyAmount": 5000, "totalAmountUsd": 3.378378, "withdrawAmountUsd": 3.283918, "totalAmountCrypto": 3.378378, "withdrawAmountCrypto": 3.283918, "feePercent": 2.5, "feePercentService": 1.5, "feePercentPartner": 1, "feeAmountUsd": 0.08446, "feeAmountUsdService": 0.050676, "feeAmountUsdPartner": 0.033784, "feeAmountLocalCurrency": 125, "feeAmountLocalCurrencyService": 75, "feeAmountLocalCurrencyPartner": 50, "feeAmountCrypto": 0.08446, "feeAmountCryptoService": 0.050676, "feeAmountCryptoPartner": 0.033784, "gasAmountUsd": 0.01, "gasAmountLocalCurrency": 14.8}}, "progress": {"done": ["choose", "wallet"], "answered": ["choose", "wallet"], "reviewed": true}, "wallet": {"network": "CELO", "notice": null}, "reference": "chk_67b6c3e7581580d24e03ba8e", "pending": null, "order": {"id": "6b03cbba878de5d4405b1da3", "resume_url": "http://shop.test/checkout/sandbox/orders/6b03cbba878de5d4405b1da3", "transfer_type": "manual"}, "events": {"order_created": true, "statuses": ["deposit_awaiting"]}}	start	6b03cbba878de5d4405b1da3	\N	\N	9	2026-11-23 05:14:33.903885+00	2026-11-23 05:14:34.303781+00	2099-01-01 00:00:00+00
rC4MjVFE8vuYjlFPrFXaXANibhoLr6bAzAU4Oj4JgXo	offramp	\N	idfcdz9KxDEUtv4KofS79DTOjE1H_VFxNGdkrD5iNbs	{}	[]	{"v": 2}	start	\N	\N	\N	1	2026-11-23 05:14:34.57899+00	2026-11-23 05:14:34.57899+00	2099-01-01 00:00:00+00
\.


--
-- Data for Name: checkout_signal_log; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.checkout_signal_log (id, order_id, status, previous_status, flow, order_params, event_id, created_at, state, claimed_at, dispatched_at, attempts, error) FROM stdin;
1	6b03cbba878de5d4405b1da3	deposit_awaiting	\N	onramp	chk_67b6c3e7581580d24e03ba8e	1	2026-11-23 05:14:34.445932+00	dispatched	2026-11-23 05:14:34.472889+00	2026-11-23 05:14:34.485225+00	1	\N
2	ord_fixture_other	deposit_awaiting	\N	onramp	shop-ref-9	4	2026-11-23 05:14:34.514563+00	dispatched	2026-11-23 05:14:34.530273+00	2026-11-23 05:14:34.532546+00	1	\N
3	ord_fixture_other	deposit_received	deposit_awaiting	onramp	shop-ref-9	5	2026-11-23 05:14:34.514563+00	dispatched	2026-11-23 05:14:34.530273+00	2026-11-23 05:14:34.532546+00	1	\N
\.


--
-- Data for Name: checkout_signal_outbox; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.checkout_signal_outbox (id, signal, event_id, duplicate, created_at, state, claimed_at, dispatched_at, attempts, error) FROM stdin;
1	webhook_received	2	1	2026-11-23 05:14:34.433847+00	dispatched	2026-11-23 05:14:34.460717+00	2026-11-23 05:14:34.465932+00	1	\N
2	webhook_received	1	0	2026-11-23 05:14:34.445932+00	dispatched	2026-11-23 05:14:34.460717+00	2026-11-23 05:14:34.465932+00	1	\N
3	webhook_received	2	0	2026-11-23 05:14:34.445932+00	dispatched	2026-11-23 05:14:34.460717+00	2026-11-23 05:14:34.465932+00	1	\N
4	webhook_received	4	0	2026-11-23 05:14:34.514563+00	dispatched	2026-11-23 05:14:34.519712+00	2026-11-23 05:14:34.528149+00	1	\N
5	webhook_received	5	0	2026-11-23 05:14:34.514563+00	dispatched	2026-11-23 05:14:34.519712+00	2026-11-23 05:14:34.528149+00	1	\N
\.


--
-- Data for Name: checkout_webhook_events; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.checkout_webhook_events (id, body_sha256, body, headers, received_at, last_seen_at, duplicates, event_type, order_id, status, updated_at, state, outcome, error, attempts, processed_at, received_owed) FROM stdin;
1	ea154e9be5b01558701299e57e21cb5efc75f13123a23d53883d950e2068d2e9	\\x7b226576656e74223a226f726465722d7374617475732d6368616e6765222c2264617461223a7b226f72646572223a7b225f6964223a22366230336362626138373864653564343430356231646133222c22757365724964223a22616432306436336334663430313137353466383938633761222c2275736572456d61696c223a22616461406578616d706c652e636f6d222c226d65726368616e744f72646572506172616d73223a2263686b5f363762366333653735383135383064323465303362613865222c22636f756e74727949736f436f6465223a224e47222c22666c6f77223a22726567756c6172222c2274797065223a226f6e5f72616d70222c22736f75726365223a22617069222c22737461747573223a226465706f7369745f6177616974696e67222c226465706f736974223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2266696174222c2263757272656e6379436f6465223a224e474e222c2263757272656e637944657461696c73223a7b22636f756e74727949736f436f6465223a224e47227d2c22636173686f7574223a7b2265786368616e676552617465223a313438302e302c2265786368616e676552617465416674657246656573223a313532322e3537313531342c22616d6f756e744265666f726546656573223a353030302e302c22616d6f756e74416674657246656573223a343836302e322c22616d6f756e744265666f726546656573557364223a332e3337383337382c22616d6f756e74416674657246656573557364223a332e3238333931387d7d2c227061796f7574223a7b227061796d656e744368616e6e656c223a2263727970746f222c2263757272656e637954797065223a2263727970746f222c2263757272656e6379436f6465223a2255534454222c2263757272656e637944657461696c73223a7b226e6574776f726b223a2243454c4f227d2c22636173686f7574223a7b2265786368616e676552617465223a312e302c2265786368616e676552617465416674657246656573223a302e39373230342c22616d6f756e744265666f726546656573223a332e3337383337382c22616d6f756e74416674657246656573223a332e3238333931382c22616d6f756e744265666f726546656573557364223a332e3337383337382c22616d6f756e74416674657246656573557364223a332e3238333931387d2c227472616e73616374696f6e223a7b226d657461223a7b22746f41646472657373223a22307835614165623630353346334539344339623941303966333336363934333545374566314265416564227d7d7d2c22637265617465644174223a22323032362d31312d32335430353a31343a33342e3236335a222c22757064617465644174223a22323032362d31312d32335430353a31343a33342e3236335a227d2c22757365724b7963223a7b7d7d7d	{"content-type": "application/json", "user-agent": "checkout-sandbox-webhooks/1", "x-signature": "f020bd6b7778aee586f4d076042db614db55281e798cc03f0a0d269ac95e3842", "content-length": "1076"}	2026-11-23 05:14:34.268423+00	2026-11-23 05:14:34.268423+00	0	order-status-change	6b03cbba878de5d4405b1da3	deposit_awaiting	2026-11-23 05:14:34.263+00	processed	applied	\N	1	2026-11-23 05:14:34.445932+00	1
5	95a73d3996d0e79b9984fd377c0832892a111814ea2373c96f70b3d8e2a37e9c	\\x7b226576656e74223a226f726465722d7374617475732d6368616e6765222c2264617461223a7b226f72646572223a7b225f6964223a226f72645f666978747572655f6f74686572222c22757365724964223a227573725f31222c2275736572456d61696c223a226275796572406578616d706c652e636f6d222c22636f756e74727949736f436f6465223a224e47222c22666c6f77223a22726567756c6172222c2274797065223a226f6e5f72616d70222c22736f75726365223a22617069222c22737461747573223a226465706f7369745f7265636569766564222c226465706f736974223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2266696174222c2263757272656e6379436f6465223a224e474e227d2c227061796f7574223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2263727970746f222c2263757272656e6379436f6465223a2255534443227d2c22637265617465644174223a22323032362d31312d32325430313a30303a30302e3030305a222c22757064617465644174223a22323032362d31312d32325430313a30353a30302e3030305a222c226d65726368616e744f72646572506172616d73223a2273686f702d7265662d39227d2c22757365724b7963223a7b7d7d7d	{"content-type": "application/json", "user-agent": "upstream-webhooks/1", "x-signature": "ab325fd77bde8616e5d0587fb04d83a2643ec1bba49b15ecadc1d8ff397d5349", "content-length": "510"}	2026-11-23 05:14:34.512635+00	2026-11-23 05:14:34.512635+00	0	order-status-change	ord_fixture_other	deposit_received	2026-11-22 01:05:00+00	processed	applied	\N	1	2026-11-23 05:14:34.514563+00	1
2	f6194f279036237ce9154e5f35b4e530a5b744f205d5b1fff1b7d5df199fabb6	\\x7b226576656e74223a226f726465722d7374617475732d6368616e6765222c2264617461223a7b226f72646572223a7b225f6964223a22366230336362626138373864653564343430356231646133222c22757365724964223a227573725f31222c2275736572456d61696c223a226275796572406578616d706c652e636f6d222c22636f756e74727949736f436f6465223a224e47222c22666c6f77223a22726567756c6172222c2274797065223a226f6e5f72616d70222c22736f75726365223a22617069222c22737461747573223a226465706f7369745f6177616974696e67222c226465706f736974223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2266696174222c2263757272656e6379436f6465223a224e474e227d2c227061796f7574223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2263727970746f222c2263757272656e6379436f6465223a2255534443227d2c22637265617465644174223a22323032362d31312d32325430313a30303a30302e3030305a222c22757064617465644174223a22323032362d31312d32325430313a30313a30302e3030305a222c226d65726368616e744f72646572506172616d73223a2263686b5f363762366333653735383135383064323465303362613865227d2c22757365724b7963223a7b7d7d7d	{"content-type": "application/json", "user-agent": "upstream-webhooks/1", "x-signature": "275a82de5d4aee9db4f8e61de0bc3332d5d7280f288169c4174fe6335be97133", "content-length": "535"}	2026-11-23 05:14:34.413322+00	2026-11-23 05:14:34.433847+00	1	order-status-change	6b03cbba878de5d4405b1da3	deposit_awaiting	2026-11-22 01:01:00+00	processed	stale	\N	1	2026-11-23 05:14:34.445932+00	1
4	e48d76ad905b55d836c66cf127c0b6c1fb1b7a7279c11c5b5e0f29a3761841bd	\\x7b226576656e74223a226f726465722d7374617475732d6368616e6765222c2264617461223a7b226f72646572223a7b225f6964223a226f72645f666978747572655f6f74686572222c22757365724964223a227573725f31222c2275736572456d61696c223a226275796572406578616d706c652e636f6d222c22636f756e74727949736f436f6465223a224e47222c22666c6f77223a22726567756c6172222c2274797065223a226f6e5f72616d70222c22736f75726365223a22617069222c22737461747573223a226465706f7369745f6177616974696e67222c226465706f736974223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2266696174222c2263757272656e6379436f6465223a224e474e227d2c227061796f7574223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2263727970746f222c2263757272656e6379436f6465223a2255534443227d2c22637265617465644174223a22323032362d31312d32325430313a30303a30302e3030305a222c22757064617465644174223a22323032362d31312d32325430313a30303a30302e3030305a222c226d65726368616e744f72646572506172616d73223a2273686f702d7265662d39227d2c22757365724b7963223a7b7d7d7d	{"content-type": "application/json", "user-agent": "upstream-webhooks/1", "x-signature": "bdfc9b265a03430af041d1192495be45519eb3b18bd51a90772f1fad3eb053bb", "content-length": "510"}	2026-11-23 05:14:34.511025+00	2026-11-23 05:14:34.511025+00	0	order-status-change	ord_fixture_other	deposit_awaiting	2026-11-22 01:00:00+00	processed	applied	\N	1	2026-11-23 05:14:34.514563+00	1
\.


--
-- Name: checkout_signal_log_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.checkout_signal_log_id_seq', 3, true);


--
-- Name: checkout_signal_outbox_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.checkout_signal_outbox_id_seq', 5, true);


--
-- Name: checkout_webhook_events_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.checkout_webhook_events_id_seq', 5, true);


--
-- Name: checkout_orders checkout_orders_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkout_orders
    ADD CONSTRAINT checkout_orders_pkey PRIMARY KEY (order_id);


--
-- Name: checkout_sessions checkout_sessions_jti_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkout_sessions
    ADD CONSTRAINT checkout_sessions_jti_key UNIQUE (jti);


--
-- Name: checkout_sessions checkout_sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkout_sessions
    ADD CONSTRAINT checkout_sessions_pkey PRIMARY KEY (id);


--
-- Name: checkout_signal_log checkout_signal_log_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkout_signal_log
    ADD CONSTRAINT checkout_signal_log_pkey PRIMARY KEY (id);


--
-- Name: checkout_signal_outbox checkout_signal_outbox_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkout_signal_outbox
    ADD CONSTRAINT checkout_signal_outbox_pkey PRIMARY KEY (id);


--
-- Name: checkout_webhook_events checkout_webhook_events_body_sha256_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkout_webhook_events
    ADD CONSTRAINT checkout_webhook_events_body_sha256_key UNIQUE (body_sha256);


--
-- Name: checkout_webhook_events checkout_webhook_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkout_webhook_events
    ADD CONSTRAINT checkout_webhook_events_pkey PRIMARY KEY (id);


--
-- Name: checkout_signal_log uq_checkout_signal_log_order_status; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkout_signal_log
    ADD CONSTRAINT uq_checkout_signal_log_order_status UNIQUE (order_id, status);


--
-- Name: ix_checkout_orders_fetch_due_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_checkout_orders_fetch_due_at ON public.checkout_orders USING btree (fetch_due_at);


--
-- Name: ix_checkout_sessions_order_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_checkout_sessions_order_id ON public.checkout_sessions USING btree (order_id);


--
-- Name: ix_checkout_signal_log_state_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_checkout_signal_log_state_id ON public.checkout_signal_log USING btree (state, id);


--
-- Name: ix_checkout_signal_outbox_state_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_checkout_signal_outbox_state_id ON public.checkout_signal_outbox USING btree (state, id);


--
-- Name: ix_checkout_webhook_events_order_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_checkout_webhook_events_order_id ON public.checkout_webhook_events USING btree (order_id);


--
-- Name: ix_checkout_webhook_events_state_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_checkout_webhook_events_state_id ON public.checkout_webhook_events USING btree (state, id);


--
-- Name: checkout_signal_log checkout_signal_log_event_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkout_signal_log
    ADD CONSTRAINT checkout_signal_log_event_id_fkey FOREIGN KEY (event_id) REFERENCES public.checkout_webhook_events(id);


--
-- Name: checkout_signal_outbox checkout_signal_outbox_event_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkout_signal_outbox
    ADD CONSTRAINT checkout_signal_outbox_event_id_fkey FOREIGN KEY (event_id) REFERENCES public.checkout_webhook_events(id);


--
-- PostgreSQL database dump complete
--

\unrestrict h1Um5fzLhawdtFhY0CwygI6ZTeYce1ad42XE13NF8VtApgKicEBILUzEXoIVbA3

