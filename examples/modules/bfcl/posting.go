package main

import (
	"strconv"
	"strings"

	"github.com/weft-dev/weft/sdk/pyvalue"
)

// TwitterAPI (bfcl_eval func_source_code/posting_api.py). Python keeps
// tweets and comments keyed by int; weft keys them by the decimal string.
// A comments key loaded from the configuration is a Python str, distinct
// from the int key a later comment() uses: such keys are kept with the
// prefix "s:" and written back without it.
var _ = addClass(&class{name: "TwitterAPI", docs: "posting_api", load: loadTwitter, methods: map[string]method{
	"authenticate_twitter":     twAuth,
	"posting_get_login_status": func(self, _ *Dict) (any, error) { return dict("login_status", truthy(self.G("authenticated"))), nil },
	"post_tweet":               twPost,
	"retweet":                  twRetweet,
	"comment":                  twComment,
	"mention":                  twMention,
	"follow_user":              twFollow,
	"list_all_following":       twListFollowing,
	"unfollow_user":            twUnfollow,
	"get_tweet":                twGetTweet,
	"get_user_tweets":          twUserTweets,
	"search_tweets":            twSearch,
	"get_tweet_comments":       twComments,
	"get_user_stats":           twStats,
}, export: twExport})

func twExport(self *Dict) *Dict {
	pub := publicState(nil, self)
	if c, ok := pub.G("comments").(*Dict); ok {
		out := newDict()
		for _, k := range c.Keys() {
			out.Set(strings.TrimPrefix(k, "s:"), c.G(k))
		}
		pub.Set("comments", out)
	}
	return pub
}

func loadTwitter(cfg *Dict) (*Dict, error) {
	tweets, _ := scenario(cfg, "tweets", newDict()).(*Dict)
	if tweets == nil {
		tweets = newDict()
	}
	// {int(k): v}: keys normalised to the int's decimal form.
	norm := newDict()
	for _, k := range tweets.Keys() {
		n, err := strconv.ParseInt(strings.TrimSpace(k), 10, 64)
		if err != nil {
			return nil, raise("invalid literal for int() with base 10: %s", pyvalue.ReprStr(k))
		}
		norm.Set(strconv.FormatInt(n, 10), tweets.G(k))
	}
	comments, _ := scenario(cfg, "comments", newDict()).(*Dict)
	cm := newDict()
	if comments != nil {
		for _, k := range comments.Keys() {
			cm.Set("s:"+k, comments.G(k))
		}
	}
	return dict(
		"username", scenario(cfg, "username", "john"),
		"password", scenario(cfg, "password", "john123"),
		"authenticated", scenario(cfg, "authenticated", false),
		"tweets", norm,
		"comments", cm,
		"retweets", scenario(cfg, "retweets", newDict()),
		"following_list", scenario(cfg, "following_list", []any{"alice", "bob"}),
		"tweet_counter", scenario(cfg, "tweet_counter", int64(0)),
	), nil
}

func tweets(self *Dict) *Dict { d, _ := self.G("tweets").(*Dict); return d }

// tweetKey is the key of an int tweet id ("" when it is not an int).
func tweetKey(id any) string {
	if !isInt(id) {
		return ""
	}
	n, _ := toInt(id)
	return strconv.FormatInt(n, 10)
}

func twAuth(self, a *Dict) (any, error) {
	if pyEq(a.G("username"), self.G("username")) && pyEq(a.G("password"), self.G("password")) {
		self.Set("authenticated", true)
		return dict("authentication_status", true), nil
	}
	return dict("authentication_status", false), nil
}

func twPost(self, a *Dict) (any, error) {
	if !truthy(self.G("authenticated")) {
		return dict("error", "User not authenticated. Please authenticate before posting."), nil
	}
	t := dict("id", self.G("tweet_counter"), "username", self.G("username"), "content", a.G("content"),
		"tags", opt(a, "tags", []any{}), "mentions", opt(a, "mentions", []any{}))
	tweets(self).Set(tweetKey(self.G("tweet_counter")), t)
	c, _ := toInt(self.G("tweet_counter"))
	self.Set("tweet_counter", c+1)
	return t, nil
}

func twRetweet(self, a *Dict) (any, error) {
	if !truthy(self.G("authenticated")) {
		return dict("error", "User not authenticated. Please authenticate before retweeting."), nil
	}
	id := a.G("tweet_id")
	k := tweetKey(id)
	if k == "" || !tweets(self).Has(k) {
		return dict("error", "Tweet with ID "+pyvalue.StrAny(id)+" not found."), nil
	}
	rt, _ := self.G("retweets").(*Dict)
	u, _ := str(self.G("username"))
	l, _ := list(rt.G(u))
	if !rt.Has(u) {
		l = []any{}
		rt.Set(u, l)
	}
	for _, x := range l {
		if pyEq(x, id) {
			return dict("retweet_status", "Already retweeted"), nil
		}
	}
	rt.Set(u, append(l, id))
	return dict("retweet_status", "Successfully retweeted"), nil
}

func twComment(self, a *Dict) (any, error) {
	if !truthy(self.G("authenticated")) {
		return dict("error", "User not authenticated. Please authenticate before commenting."), nil
	}
	id := a.G("tweet_id")
	k := tweetKey(id)
	if k == "" || !tweets(self).Has(k) {
		return dict("error", "Tweet with ID "+pyvalue.StrAny(id)+" not found."), nil
	}
	cm, _ := self.G("comments").(*Dict)
	l, _ := list(cm.G(k))
	cm.Set(k, append(l, dict("username", self.G("username"), "content", a.G("comment_content"))))
	return dict("comment_status", "Comment added successfully"), nil
}

func twMention(self, a *Dict) (any, error) {
	id := a.G("tweet_id")
	k := tweetKey(id)
	if k == "" || !tweets(self).Has(k) {
		return dict("error", "Tweet with ID "+pyvalue.StrAny(id)+" not found."), nil
	}
	t, _ := tweets(self).G(k).(*Dict)
	m, _ := list(t.G("mentions"))
	add, _ := list(a.G("mentioned_usernames"))
	t.Set("mentions", append(append([]any{}, m...), add...))
	return dict("mention_status", "Users mentioned successfully"), nil
}

func twFollow(self, a *Dict) (any, error) {
	if !truthy(self.G("authenticated")) {
		return dict("error", "User not authenticated. Please authenticate before following."), nil
	}
	fl, _ := list(self.G("following_list"))
	for _, x := range fl {
		if pyEq(x, a.G("username_to_follow")) {
			return dict("follow_status", false), nil
		}
	}
	self.Set("following_list", append(fl, a.G("username_to_follow")))
	return dict("follow_status", true), nil
}

func twListFollowing(self, _ *Dict) (any, error) {
	if !truthy(self.G("authenticated")) {
		return dict("error", "User not authenticated. Please authenticate before listing following."), nil
	}
	return dict("following_list", self.G("following_list")), nil
}

func twUnfollow(self, a *Dict) (any, error) {
	if !truthy(self.G("authenticated")) {
		return dict("error", "User not authenticated. Please authenticate before unfollowing."), nil
	}
	fl, _ := list(self.G("following_list"))
	for i, x := range fl {
		if pyEq(x, a.G("username_to_unfollow")) {
			self.Set("following_list", append(fl[:i:i], fl[i+1:]...))
			return dict("unfollow_status", true), nil
		}
	}
	return dict("unfollow_status", false), nil
}

func twGetTweet(self, a *Dict) (any, error) {
	id := a.G("tweet_id")
	k := tweetKey(id)
	if k == "" || !tweets(self).Has(k) {
		return dict("error", "Tweet with ID "+pyvalue.StrAny(id)+" not found."), nil
	}
	return tweets(self).G(k), nil
}

func twUserTweets(self, a *Dict) (any, error) {
	out := []any{}
	for _, t := range tweets(self).Values() {
		if d, ok := t.(*Dict); ok && pyEq(d.G("username"), a.G("username")) {
			out = append(out, d)
		}
	}
	return out, nil
}

func twSearch(self, a *Dict) (any, error) {
	kw, ok := str(a.G("keyword"))
	if !ok {
		return nil, raise("'keyword' has no attribute 'lower'")
	}
	kw = strings.ToLower(kw)
	out := []any{}
	for _, t := range tweets(self).Values() {
		d, _ := t.(*Dict)
		c, _ := str(d.G("content"))
		hit := strings.Contains(strings.ToLower(c), kw)
		tags, _ := list(d.G("tags"))
		for _, tg := range tags {
			if s, _ := str(tg); strings.ToLower(s) == kw {
				hit = true
			}
		}
		if hit {
			out = append(out, d)
		}
	}
	return out, nil
}

func twComments(self, a *Dict) (any, error) {
	id := a.G("tweet_id")
	k := tweetKey(id)
	if k == "" || !tweets(self).Has(k) {
		return dict("error", "Tweet with ID "+pyvalue.StrAny(id)+" not found."), nil
	}
	cm, _ := self.G("comments").(*Dict)
	if v, ok := cm.Get(k); ok {
		return v, nil
	}
	return []any{}, nil
}

func twStats(self, a *Dict) (any, error) {
	n := int64(0)
	for _, t := range tweets(self).Values() {
		if d, ok := t.(*Dict); ok && pyEq(d.G("username"), a.G("username")) {
			n++
		}
	}
	fc := int64(0)
	if pyEq(a.G("username"), self.G("username")) {
		fl, _ := list(self.G("following_list"))
		fc = int64(len(fl))
	}
	rt, _ := self.G("retweets").(*Dict)
	u, _ := str(a.G("username"))
	l, _ := list(rt.G(u))
	return dict("tweet_count", n, "following_count", fc, "retweet_count", int64(len(l))), nil
}
