-- tau2-bench retail domain in the synthesized-server format (weft.server/v1):
-- scalar fields as columns, nested lists and maps that tools read or write
-- whole (an order's items, fulfillments and payment history; a variant's
-- options; a user's order ids) as JSON columns, which program.star reads
-- back decoded and writes as JSON text.
--
-- Conventions:
--   * pos is the record's position in db.json's object (export and the
--     find tools walk records in that order).
--   * Money outside JSON columns is DOUBLE: the reference computes in
--     IEEE-754 floats (balances such as 0.04999999999999716).
--   * A nullable column is NULL exactly when db.json has no such key.

-- users: db.json "users", the name and default address inlined.
CREATE TABLE users (
  user_id    VARCHAR(64)  NOT NULL,
  pos        INT          NOT NULL,
  first_name VARCHAR(255) NOT NULL,
  last_name  VARCHAR(255) NOT NULL,
  address1   VARCHAR(255) NOT NULL,
  address2   VARCHAR(255) NOT NULL,
  city       VARCHAR(255) NOT NULL,
  country    VARCHAR(255) NOT NULL,
  state      VARCHAR(255) NOT NULL,
  zip        VARCHAR(32)  NOT NULL,
  email      VARCHAR(255) NOT NULL,
  orders     JSON         NOT NULL,
  PRIMARY KEY (user_id),
  INDEX users_zip (zip)
);

-- payment_methods: a user's "payment_methods" object, one row per entry
-- (pos: its position). brand and last_four are set for credit cards,
-- balance for gift cards.
CREATE TABLE payment_methods (
  user_id           VARCHAR(64) NOT NULL,
  payment_method_id VARCHAR(64) NOT NULL,
  pos               INT         NOT NULL,
  source            VARCHAR(32) NOT NULL,
  brand             VARCHAR(64) NULL,
  last_four         VARCHAR(8)  NULL,
  balance           DOUBLE      NULL,
  PRIMARY KEY (user_id, payment_method_id)
);

-- orders: db.json "orders", the shipping address inlined; items,
-- fulfillments and payment_history as JSON arrays in db.json's shape. The
-- fields set by the cancel, exchange and return tools are NULL until set.
CREATE TABLE orders (
  order_id                   VARCHAR(64)  NOT NULL,
  pos                        INT          NOT NULL,
  user_id                    VARCHAR(64)  NOT NULL,
  address1                   VARCHAR(255) NOT NULL,
  address2                   VARCHAR(255) NOT NULL,
  city                       VARCHAR(255) NOT NULL,
  country                    VARCHAR(255) NOT NULL,
  state                      VARCHAR(255) NOT NULL,
  zip                        VARCHAR(32)  NOT NULL,
  status                     VARCHAR(64)  NOT NULL,
  items                      JSON         NOT NULL,
  fulfillments               JSON         NOT NULL,
  payment_history            JSON         NOT NULL,
  cancel_reason              VARCHAR(255) NULL,
  exchange_items             JSON         NULL,
  exchange_new_items         JSON         NULL,
  exchange_payment_method_id VARCHAR(64)  NULL,
  exchange_price_difference  DOUBLE       NULL,
  return_items               JSON         NULL,
  return_payment_method_id   VARCHAR(64)  NULL,
  PRIMARY KEY (order_id)
);

-- products: db.json "products" without their variants.
CREATE TABLE products (
  product_id VARCHAR(64)  NOT NULL,
  pos        INT          NOT NULL,
  name       VARCHAR(255) NOT NULL,
  PRIMARY KEY (product_id)
);

-- variants: a product's "variants" object, one row per entry (pos: its
-- position); item ids are unique over all products.
CREATE TABLE variants (
  product_id VARCHAR(64) NOT NULL,
  item_id    VARCHAR(64) NOT NULL,
  pos        INT         NOT NULL,
  options    JSON        NOT NULL,
  available  BOOLEAN     NOT NULL,
  price      DOUBLE      NOT NULL,
  PRIMARY KEY (product_id, item_id),
  UNIQUE INDEX variants_item (item_id)
);
