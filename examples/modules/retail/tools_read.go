package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/weft-dev/weft/examples/modules/retail/records"
	"sort"
	"strings"
	"unicode/utf16"
)

// Lookups shared by the tools. Their errors are tool errors: the agent
// asked for something that does not exist.

func getOrder(ctx context.Context, id string) (*order, error) {
	o, err := loadOrder(ctx, id)
	if err == nil && o == nil {
		err = errors.New("Order not found")
	}
	return o, err
}

func getUser(ctx context.Context, id string) (*user, error) {
	u, err := loadUser(ctx, id)
	if err == nil && u == nil {
		err = errors.New("User not found")
	}
	return u, err
}

func getProduct(ctx context.Context, id string) (*product, error) {
	p, err := loadProduct(ctx, id)
	if err == nil && p == nil {
		err = errors.New("Product not found")
	}
	return p, err
}

// getVariant returns the variant itemID of product productID.
func getVariant(ctx context.Context, productID, itemID string) (*variant, error) {
	p, err := getProduct(ctx, productID)
	if err != nil {
		return nil, err
	}
	for _, v := range p.Variants {
		if v.ItemID == itemID {
			return v, nil
		}
	}
	return nil, errors.New("Variant not found")
}

// getPaymentMethod returns the user's payment method (and the user).
func getPaymentMethod(ctx context.Context, u *user, userID, methodID string) (*user, *paymentMethod, error) {
	if u == nil {
		var err error
		if u, err = getUser(ctx, userID); err != nil {
			return nil, nil, err
		}
	}
	m := u.Method(methodID)
	if m == nil {
		return u, nil, errors.New("Payment method not found")
	}
	return u, m, nil
}

// pyLower approximates Python's str.lower for the comparisons of the two
// find tools.
func pyLower(s string) string { return strings.ToLower(s) }

// --- read tools ---------------------------------------------------------------

type findByEmailIn struct {
	Email string `json:"email" description:"The customer's email address, e.g. 'jane.doe1234@example.com'. Compared without regard to case."`
}

func findUserIDByEmail(ctx context.Context, in findByEmailIn) (string, error) {
	rows, err := query(ctx, "SELECT user_id, email FROM users ORDER BY pos")
	if err != nil {
		return "", err
	}
	want := pyLower(in.Email)
	for _, r := range rows {
		c := records.NewCells(r)
		id, email := c.Str(), c.Str()
		if err := c.Check("users"); err != nil {
			return "", err
		}
		if pyLower(email) == want {
			return id, nil
		}
	}
	return "", errors.New("User not found")
}

type findByNameZipIn struct {
	FirstName string `json:"first_name" description:"The customer's first name, e.g. 'Jane' (case does not matter)."`
	LastName  string `json:"last_name" description:"The customer's last name, e.g. 'Doe' (case does not matter)."`
	Zip       string `json:"zip" description:"The zip code of the customer's default address, e.g. '10001' (exact)."`
}

func findUserIDByNameZip(ctx context.Context, in findByNameZipIn) (string, error) {
	rows, err := query(ctx, "SELECT user_id, first_name, last_name, zip FROM users WHERE zip = ? ORDER BY pos", in.Zip)
	if err != nil {
		return "", err
	}
	first, last := pyLower(in.FirstName), pyLower(in.LastName)
	for _, r := range rows {
		c := records.NewCells(r)
		id, f, l, zip := c.Str(), c.Str(), c.Str(), c.Str()
		if err := c.Check("users"); err != nil {
			return "", err
		}
		if pyLower(f) == first && pyLower(l) == last && zip == in.Zip {
			return id, nil
		}
	}
	return "", errors.New("User not found")
}

type orderIDIn struct {
	OrderID string `json:"order_id" description:"The order id, which starts with '#', e.g. '#W1234567'."`
}

func getOrderDetails(ctx context.Context, in orderIDIn) (*order, error) {
	return getOrder(ctx, in.OrderID)
}

type productIDIn struct {
	ProductID string `json:"product_id" description:"The product (type) id, e.g. '1234567890'. Not an item id."`
}

func getProductDetails(ctx context.Context, in productIDIn) (*product, error) {
	return getProduct(ctx, in.ProductID)
}

type itemIDIn struct {
	ItemID string `json:"item_id" description:"The item (variant) id, e.g. '1234567890'. Not a product id."`
}

func getItemDetails(ctx context.Context, in itemIDIn) (*variant, error) {
	v, err := loadVariant(ctx, in.ItemID)
	if err == nil && v == nil {
		err = errors.New("Item not found")
	}
	return v, err
}

type userIDIn struct {
	UserID string `json:"user_id" description:"The user id, e.g. 'jane_doe_1234'."`
}

func getUserDetails(ctx context.Context, in userIDIn) (*user, error) {
	return getUser(ctx, in.UserID)
}

type noIn struct{}

// listAllProductTypes returns {product name: product id} as JSON text
// sorted by name, formatted as Python's json.dumps formats it; a later
// product with the same name wins, as in a dict built in order.
func listAllProductTypes(ctx context.Context, _ noIn) (string, error) {
	rows, err := query(ctx, "SELECT name, product_id FROM products ORDER BY pos")
	if err != nil {
		return "", err
	}
	byName := map[string]string{}
	for _, r := range rows {
		c := records.NewCells(r)
		name, id := c.Str(), c.Str()
		if err := c.Check("products"); err != nil {
			return "", err
		}
		byName[name] = id
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pyJSONString(n))
		b.WriteString(": ")
		b.WriteString(pyJSONString(byName[n]))
	}
	b.WriteByte('}')
	return b.String(), nil
}

// pyJSONString quotes s as Python's json.dumps does (ensure_ascii).
func pyJSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20 || (r >= 0x7f && r < 0x10000):
				fmt.Fprintf(&b, `\u%04x`, r)
			case r >= 0x10000:
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
