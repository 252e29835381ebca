-- tau2-bench retail domain as a relational schema (MySQL dialect, weft core/state).
--
-- Conventions:
--   * Every JSON array and every JSON object whose key order is data (the
--     users/orders/products maps, payment_methods, variants, options) keeps
--     its order in an INT `pos` column, 0-based; export sorts by it.
--   * Money (prices, amounts, balances, price differences) is DOUBLE: the
--     reference tools compute in IEEE-754 floats and store values such as
--     0.04999999999999716 that DECIMAL(10,2) could not hold.
--   * A nullable column is NULL exactly when the key is absent (or null) in
--     the JSON; tau2's data model does not tell the two apart.

-- users: one row per entry of db.json "users" (pos = position in that object).
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
  PRIMARY KEY (user_id),
  INDEX users_email (email),
  INDEX users_zip (zip)
);

-- payment_methods: a user's "payment_methods" object, one row per entry.
-- brand and last_four are set for credit_card, balance for gift_card.
CREATE TABLE payment_methods (
  user_id           VARCHAR(64)  NOT NULL,
  payment_method_id VARCHAR(64)  NOT NULL,
  pos               INT          NOT NULL,
  source            VARCHAR(32)  NOT NULL,
  brand             VARCHAR(64)  NULL,
  last_four         VARCHAR(8)   NULL,
  balance           DOUBLE       NULL,
  PRIMARY KEY (user_id, payment_method_id)
);

-- user_orders: a user's "orders" list of order ids, in list order.
CREATE TABLE user_orders (
  user_id  VARCHAR(64) NOT NULL,
  pos      INT         NOT NULL,
  order_id VARCHAR(64) NOT NULL,
  PRIMARY KEY (user_id, pos),
  INDEX user_orders_order (order_id)
);

-- orders: one row per entry of db.json "orders"; the shipping address is
-- inlined. The optional fields set by cancel / exchange / return tools are
-- NULL until set; the three item-id lists are JSON arrays (order kept).
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
  cancel_reason              VARCHAR(255) NULL,
  exchange_items             JSON         NULL,
  exchange_new_items         JSON         NULL,
  exchange_payment_method_id VARCHAR(64)  NULL,
  exchange_price_difference  DOUBLE       NULL,
  return_items               JSON         NULL,
  return_payment_method_id   VARCHAR(64)  NULL,
  PRIMARY KEY (order_id),
  INDEX orders_user (user_id)
);

-- order_items: an order's "items" list. item_id is not unique within an
-- order (the same variant may be bought twice), so the key is the position.
CREATE TABLE order_items (
  order_id   VARCHAR(64)  NOT NULL,
  pos        INT          NOT NULL,
  item_id    VARCHAR(64)  NOT NULL,
  product_id VARCHAR(64)  NOT NULL,
  name       VARCHAR(255) NOT NULL,
  price      DOUBLE       NOT NULL,
  PRIMARY KEY (order_id, pos),
  INDEX order_items_item (item_id)
);

-- order_item_options: the "options" object of order item item_pos, in key order.
CREATE TABLE order_item_options (
  order_id VARCHAR(64)  NOT NULL,
  item_pos INT          NOT NULL,
  pos      INT          NOT NULL,
  name     VARCHAR(255) NOT NULL,
  value    VARCHAR(255) NOT NULL,
  PRIMARY KEY (order_id, item_pos, pos)
);

-- fulfillments: an order's "fulfillments" list.
CREATE TABLE fulfillments (
  order_id VARCHAR(64) NOT NULL,
  pos      INT         NOT NULL,
  PRIMARY KEY (order_id, pos)
);

-- fulfillment_tracking_ids: the "tracking_id" list of fulfillment fulfillment_pos.
CREATE TABLE fulfillment_tracking_ids (
  order_id        VARCHAR(64) NOT NULL,
  fulfillment_pos INT         NOT NULL,
  pos             INT         NOT NULL,
  tracking_id     VARCHAR(64) NOT NULL,
  PRIMARY KEY (order_id, fulfillment_pos, pos)
);

-- fulfillment_item_ids: the "item_ids" list of fulfillment fulfillment_pos
-- (an item id may repeat).
CREATE TABLE fulfillment_item_ids (
  order_id        VARCHAR(64) NOT NULL,
  fulfillment_pos INT         NOT NULL,
  pos             INT         NOT NULL,
  item_id         VARCHAR(64) NOT NULL,
  PRIMARY KEY (order_id, fulfillment_pos, pos)
);

-- payments: an order's "payment_history" list (payments and refunds).
CREATE TABLE payments (
  order_id          VARCHAR(64) NOT NULL,
  pos               INT         NOT NULL,
  transaction_type  VARCHAR(32) NOT NULL,
  amount            DOUBLE      NOT NULL,
  payment_method_id VARCHAR(64) NOT NULL,
  PRIMARY KEY (order_id, pos)
);

-- products: one row per entry of db.json "products".
CREATE TABLE products (
  product_id VARCHAR(64)  NOT NULL,
  pos        INT          NOT NULL,
  name       VARCHAR(255) NOT NULL,
  PRIMARY KEY (product_id),
  INDEX products_name (name)
);

-- variants: a product's "variants" object, one row per entry. item_id is
-- unique over all products in the data (get_item_details looks it up alone).
CREATE TABLE variants (
  product_id VARCHAR(64) NOT NULL,
  item_id    VARCHAR(64) NOT NULL,
  pos        INT         NOT NULL,
  available  BOOLEAN     NOT NULL,
  price      DOUBLE      NOT NULL,
  PRIMARY KEY (product_id, item_id),
  UNIQUE INDEX variants_item (item_id)
);

-- variant_options: the "options" object of a variant, in key order.
CREATE TABLE variant_options (
  product_id VARCHAR(64)  NOT NULL,
  item_id    VARCHAR(64)  NOT NULL,
  pos        INT          NOT NULL,
  name       VARCHAR(255) NOT NULL,
  value      VARCHAR(255) NOT NULL,
  PRIMARY KEY (product_id, item_id, pos)
);
