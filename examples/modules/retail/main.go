package main

import (
	"github.com/weft-dev/weft/sdk/tool"
)

func main() {}

// tables is every table of the retail schema; the module owns them all.
var tables = []string{
	"users", "payment_methods", "user_orders",
	"orders", "order_items", "order_item_options",
	"fulfillments", "fulfillment_tracking_ids", "fulfillment_item_ids", "payments",
	"products", "variants", "variant_options",
}

func init() {
	tool.Module(tool.Info{
		Name:        "retail",
		Version:     "1.0.0",
		Description: "Online retail customer service (tau2-bench retail domain): look up customers, orders and products; cancel or modify pending orders; return or exchange delivered items.",
		Owns:        tables,
	})

	ro := tool.ReadOnly()
	tool.Register("calculate",
		"Evaluate an arithmetic expression (numbers, + - * /, parentheses, spaces) and return the result rounded to 2 decimal places.",
		calculate, ro)
	tool.Register("cancel_pending_order",
		"Cancel an order whose status is 'pending'. The reason must be 'no longer needed' or 'ordered by mistake'. "+
			"Every payment is refunded: gift card payments go back to the gift card balance at once, other methods are refunded in 5 to 7 business days. "+
			"Confirm the details with the customer (explicit yes) before calling. Returns the order after cancellation.",
		withWrites(cancelPendingOrder))
	tool.Register("exchange_delivered_order_items",
		"Request an exchange of items of a delivered order for other variants (options) of the same products. "+
			"item_ids and new_item_ids pair up by position; each new item must be available. The price difference is paid or refunded with payment_method_id "+
			"(a gift card must cover it). A delivered order can be returned or exchanged only once. "+
			"Confirm the details with the customer (explicit yes) before calling. Returns the order with its status set to 'exchange requested'.",
		withWrites(exchangeDeliveredOrderItems))
	tool.Register("find_user_id_by_name_zip",
		"Look up a customer's user id by first name, last name (both case-insensitive) and zip code. "+
			"Prefer find_user_id_by_email; use this when the email is unknown or not found. Errors when no customer matches.",
		findUserIDByNameZip, ro)
	tool.Register("find_user_id_by_email",
		"Look up a customer's user id by email address (case-insensitive). Errors when no customer matches.",
		findUserIDByEmail, ro)
	tool.Register("get_order_details",
		"Return an order: its items, status, shipping address, fulfillments, payment history and any cancellation, exchange or return details.",
		getOrderDetails, ro)
	tool.Register("get_product_details",
		"Return a product type and all its variants (item ids with their options, availability and price).",
		getProductDetails, ro)
	tool.Register("get_item_details",
		"Return one item (a product variant): its options, availability and price.",
		getItemDetails, ro)
	tool.Register("get_user_details",
		"Return a customer's profile: name, default address, email, payment methods (with gift card balances) and order ids.",
		getUserDetails, ro)
	tool.Register("list_all_product_types",
		"List every product type of the store (50 of them) as a JSON object from product name to product id, sorted by name.",
		listAllProductTypes, ro)
	tool.Register("modify_pending_order_address",
		"Change the shipping address of a pending order. Confirm the details with the customer (explicit yes) before calling. Returns the updated order.",
		withWrites(modifyPendingOrderAddress))
	tool.Register("modify_pending_order_items",
		"Swap items of an order with status exactly 'pending' for other available variants of the same products; item_ids and new_item_ids pair up by position "+
			"and each new id must differ from its old one. The price difference is charged or refunded with payment_method_id (a gift card must cover it). "+
			"This can be done only once per order: the status becomes 'pending (item modified)'. Confirm with the customer (explicit yes) before calling. Returns the updated order.",
		withWrites(modifyPendingOrderItems))
	tool.Register("modify_pending_order_payment",
		"Move the payment of a pending order to another of the customer's payment methods (a gift card must cover the amount); the old payment is refunded. "+
			"Confirm the details with the customer (explicit yes) before calling. Returns the updated order.",
		withWrites(modifyPendingOrderPayment))
	tool.Register("modify_user_address",
		"Change a customer's default address. Confirm the details with the customer (explicit yes) before calling. Returns the updated user.",
		withWrites(modifyUserAddress))
	tool.Register("return_delivered_order_items",
		"Request a return of items of a delivered order. The refund goes to the order's original payment method or to one of the customer's gift cards. "+
			"The customer gets an email with return instructions. Confirm the details with the customer (explicit yes) before calling. "+
			"Returns the order with its status set to 'return requested'.",
		withWrites(returnDeliveredOrderItems))
	tool.Register("transfer_to_human_agents",
		"Hand the conversation to a human agent with a summary of the issue. Use only when the customer asks for a human or the request cannot be handled with the other tools and the policy.",
		transferToHumanAgents, ro)
	tool.Export(exportDB)
}
