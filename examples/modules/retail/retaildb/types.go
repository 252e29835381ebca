package retaildb

// DB is the whole retail database as decoded from db.json's shape
// ({"products": {...}, "users": {...}, "orders": {...}}, each map keyed by
// the record's id; Decode, UnmarshalJSON), the input of LoadDB. Reading
// the tables back (ExportDB, Export) gives package records' types, the
// module's own, whose JSON is the file's again.
type DB struct {
	Products []Product
	Users    []User
	Orders   []Order
}

// Product is one entry of db.json "products".
type Product struct {
	Name      string
	ProductID string
	Variants  []Variant // JSON: object keyed by item_id, in slice order
}

// Variant is one entry of a product's "variants".
type Variant struct {
	ItemID    string
	Options   Options
	Available bool
	Price     float64
}

// User is one entry of db.json "users".
type User struct {
	UserID         string
	Name           Name
	Address        Address
	Email          string
	PaymentMethods []PaymentMethod // JSON: object keyed by id, in slice order
	Orders         []string
}

// Name is a user's name.
type Name struct {
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
}

// Address is a user's or an order's address.
type Address struct {
	Address1 string `json:"address1"`
	Address2 string `json:"address2"`
	City     string `json:"city"`
	Country  string `json:"country"`
	State    string `json:"state"`
	Zip      string `json:"zip"`
}

// PaymentMethod is one entry of a user's "payment_methods". Brand and
// LastFour are set for credit cards, Balance for gift cards; nil fields are
// absent from the JSON.
type PaymentMethod struct {
	Source   string
	ID       string
	Brand    *string
	LastFour *string
	Balance  *float64
}

// Order is one entry of db.json "orders". The pointer and slice fields after
// PaymentHistory are tau2's optional order fields; nil means unset (None).
//
// Order's own JSON encoding is tau2's record shape, the one its tools return
// and the oracle's final_changes use: all fourteen keys, unset ones null.
// Inside a DB the file shape is used instead (unset optional keys omitted).
// (Decoding only: ExportOrder returns a records.Order, which encodes.)
type Order struct {
	OrderID                 string
	UserID                  string
	Address                 Address
	Items                   []OrderItem
	Status                  string
	Fulfillments            []Fulfillment
	PaymentHistory          []Payment
	CancelReason            *string
	ExchangeItems           []string
	ExchangeNewItems        []string
	ExchangePaymentMethodID *string
	ExchangePriceDifference *float64
	ReturnItems             []string
	ReturnPaymentMethodID   *string
}

// OrderItem is one entry of an order's "items".
type OrderItem struct {
	Name      string
	ProductID string
	ItemID    string
	Price     float64
	Options   Options
}

// Fulfillment is one entry of an order's "fulfillments".
type Fulfillment struct {
	TrackingID []string
	ItemIDs    []string
}

// Payment is one entry of an order's "payment_history".
type Payment struct {
	TransactionType string
	Amount          float64
	PaymentMethodID string
}

// Options is a string-to-string JSON object (a variant's or an item's
// options) with its key order kept.
type Options []Option

// Option is one key of an Options object.
type Option struct {
	Name  string
	Value string
}
