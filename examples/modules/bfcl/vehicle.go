package main

import (
	"math"
	"strings"

	"github.com/weft-dev/weft/sdk/pyvalue"
)

// VehicleControlAPI (bfcl_eval func_source_code/vehicle_control.py).
// _parkingBrakeForce, _slopeAngle and _brakePedalForce are private (not in
// the exported state); speed and outside temperature are random.uniform
// draws of random.Random(random_seed, default 141053).
var _ = addClass(&class{name: "VehicleControlAPI", docs: "vehicle_control", load: loadVehicle, methods: map[string]method{
	"startEngine":                              vcStartEngine,
	"fillFuelTank":                             vcFillFuel,
	"lockDoors":                                vcLockDoors,
	"adjustClimateControl":                     vcClimate,
	"get_outside_temperature_from_google":      func(self, _ *Dict) (any, error) { return dict("outsideTemperature", vcUniform(self, -10, 40)), nil },
	"get_outside_temperature_from_weather_com": func(_, _ *Dict) (any, error) { return dict("error", int64(404)), nil },
	"setHeadlights":                            vcHeadlights,
	"displayCarStatus":                         vcDisplayStatus,
	"activateParkingBrake":                     vcParkingBrake,
	"pressBrakePedal":                          vcPressBrake,
	"releaseBrakePedal":                        vcReleaseBrake,
	"setCruiseControl":                         vcCruise,
	"get_current_speed":                        func(self, _ *Dict) (any, error) { return dict("currentSpeed", vcUniform(self, 0, 120)), nil },
	"display_log":                              func(_, a *Dict) (any, error) { return dict("log", a.G("messages")), nil },
	"estimate_drive_feasibility_by_mileage":    vcFeasible,
	"liter_to_gallon":                          func(_, a *Dict) (any, error) { f, _ := num(a.G("liter")); return dict("gallon", f*0.264172), nil },
	"gallon_to_liter":                          func(_, a *Dict) (any, error) { f, _ := num(a.G("gallon")); return dict("liter", f*3.78541), nil },
	"estimate_distance":                        vcDistance,
	"get_zipcode_based_on_city":                vcZip,
	"set_navigation":                           vcNavigate,
	"check_tire_pressure":                      vcTires,
	"find_nearest_tire_shop": func(_, _ *Dict) (any, error) {
		return dict("shopLocation", "456 Oakwood Avenue, Rivermist, 83214"), nil
	},
}})

func loadVehicle(cfg *Dict) (*Dict, error) {
	g := func(k string, def any) any { return scenario(cfg, k, def) }
	doors := g("doorStatus", dict("driver", "unlocked", "passenger", "unlocked", "rear_left", "unlocked", "rear_right", "unlocked"))
	locked := int64(0)
	if d, ok := doors.(*Dict); ok {
		for _, v := range d.Values() {
			if v == "locked" {
				locked++
			}
		}
	}
	self := dict(
		"fuelLevel", g("fuelLevel", 0.0),
		"batteryVoltage", g("batteryVoltage", 12.6),
		"engine_state", g("engineState", "stopped"),
		"remainingUnlockedDoors", 4-locked,
		"doorStatus", doors,
		"acTemperature", g("acTemperature", 25.0),
		"fanSpeed", g("fanSpeed", int64(50)),
		"acMode", g("acMode", "auto"),
		"humidityLevel", g("humidityLevel", 50.0),
		"headLightStatus", g("headLightStatus", "off"),
		"parkingBrakeStatus", g("parkingBrakeStatus", "released"),
		"_parkingBrakeForce", g("parkingBrakeForce", 0.0),
		"_slopeAngle", g("slopeAngle", 0.0),
		"brakePedalStatus", g("brakePedalStatus", "released"),
		"_brakePedalForce", g("brakePedalForce", 0.0),
		"distanceToNextVehicle", g("distanceToNextVehicle", 50.0),
		"cruiseStatus", g("cruiseStatus", "inactive"),
		"destination", g("destination", "None"),
		"frontLeftTirePressure", g("frontLeftTirePressure", 32.0),
		"frontRightTirePressure", g("frontRightTirePressure", 32.0),
		"rearLeftTirePressure", g("rearLeftTirePressure", 30.0),
		"rearRightTirePressure", g("rearRightTirePressure", 30.0),
		"long_context", false,
	)
	seedRandom(self, g("random_seed", int64(141053)))
	return self, nil
}

func vcUniform(self *Dict, a, b float64) float64 {
	r, save := rng(self)
	v := r.uniform(a, b)
	save()
	return v
}

func doorStatus(self *Dict) *Dict { d, _ := self.G("doorStatus").(*Dict); return d }

func vcStartEngine(self, a *Dict) (any, error) {
	mode := a.G("ignitionMode")
	if mode == "STOP" {
		self.Set("engine_state", "stopped")
	}
	if n, _ := num(self.G("remainingUnlockedDoors")); n > 0 {
		var open []string
		for _, k := range doorStatus(self).Keys() {
			if doorStatus(self).G(k) == "unlocked" {
				open = append(open, k)
			}
		}
		return dict("error", "All doors must be locked before starting the engine. Here are the unlocked doors: "+strings.Join(open, ", ")), nil
	}
	if self.G("brakePedalStatus") != "pressed" {
		return dict("error", "Brake pedal needs to be pressed when starting the engine."), nil
	}
	if f, _ := num(self.G("_brakePedalForce")); f != 1000.0 {
		return dict("error", "Must press the brake fully before starting the engine."), nil
	}
	if f, _ := num(self.G("fuelLevel")); f < 0 {
		return dict("error", "Fuel tank is empty."), nil
	}
	if mode != "START" {
		return dict("error", "Invalid ignition mode."), nil
	}
	self.Set("engine_state", "running")
	return dict("engineState", self.G("engine_state"), "fuelLevel", self.G("fuelLevel"), "batteryVoltage", self.G("batteryVoltage")), nil
}

func vcFillFuel(self, a *Dict) (any, error) {
	amt := a.G("fuelAmount")
	f, _ := num(amt)
	lvl, _ := num(self.G("fuelLevel"))
	if f < 0 {
		return dict("error", "Fuel amount cannot be negative."), nil
	}
	if lvl+f > 50 {
		return dict("error", "Cannot fill gas above the tank capacity."), nil
	}
	if lvl+f < 0 {
		return dict("error", "Fuel tank is empty. Min fuel level is 0 gallons."), nil
	}
	self.Set("fuelLevel", addNum(self.G("fuelLevel"), amt))
	return dict("fuelLevel", self.G("fuelLevel")), nil
}

func vcLockDoors(self, a *Dict) (any, error) {
	doors, _ := list(a.G("door"))
	ds := doorStatus(self)
	unlock := truthy(a.G("unlock"))
	want, status := "locked", "locked"
	delta := int64(-1)
	if unlock {
		want, status, delta = "unlocked", "unlocked", 1
	}
	for _, d := range doors {
		k, _ := str(d)
		v, ok := ds.Get(k)
		if !ok {
			return nil, raise("%s", pyvalue.ReprAny(d))
		}
		if v == want {
			continue
		}
		ds.Set(k, want)
		n, _ := toInt(self.G("remainingUnlockedDoors"))
		self.Set("remainingUnlockedDoors", n+delta)
	}
	return dict("lockStatus", status, "remainingUnlockedDoors", self.G("remainingUnlockedDoors")), nil
}

func vcClimate(self, a *Dict) (any, error) {
	temp := a.G("temperature")
	fan := opt(a, "fanSpeed", int64(50))
	mode := opt(a, "mode", "auto")
	fs, ok := num(fan)
	if !ok {
		return nil, raise("'<=' not supported between instances of 'int' and '%T'", fan)
	}
	if !(0 <= fs && fs <= 100) {
		return dict("error", "Fan speed must be between 0 and 100."), nil
	}
	self.Set("acTemperature", temp)
	if opt(a, "unit", "celsius") == "fahrenheit" {
		t, _ := num(temp)
		self.Set("acTemperature", (t-32)*5/9)
	}
	self.Set("fanSpeed", fan)
	self.Set("acMode", mode)
	return dict("currentACTemperature", temp, "climateMode", mode, "humidityLevel", self.G("humidityLevel")), nil
}

func vcHeadlights(self, a *Dict) (any, error) {
	m := a.G("mode")
	if m != "on" && m != "off" && m != "auto" {
		return dict("error", "Invalid headlight mode."), nil
	}
	if m == "on" {
		self.Set("headLightStatus", "on")
		return dict("headlightStatus", "on"), nil
	}
	self.Set("headLightStatus", "off")
	return dict("headlightStatus", "off"), nil
}

func vcDisplayStatus(self, a *Dict) (any, error) {
	s := newDict()
	switch a.G("option") {
	case "fuel":
		s.Set("fuelLevel", self.G("fuelLevel"))
	case "battery":
		s.Set("batteryVoltage", self.G("batteryVoltage"))
	case "doors":
		s.Set("doorStatus", self.G("doorStatus"))
	case "climate":
		s.Set("currentACTemperature", self.G("acTemperature"))
		s.Set("fanSpeed", self.G("fanSpeed"))
		s.Set("climateMode", self.G("acMode"))
		s.Set("humidityLevel", self.G("humidityLevel"))
	case "headlights":
		s.Set("headlightStatus", self.G("headLightStatus"))
	case "parkingBrake":
		s.Set("parkingBrakeStatus", self.G("parkingBrakeStatus"))
		s.Set("parkingBrakeForce", self.G("_parkingBrakeForce"))
		s.Set("slopeAngle", self.G("_slopeAngle"))
	case "brakePedal":
		s.Set("brakePedalStatus", self.G("brakePedalStatus"))
		s.Set("brakePedalForce", self.G("_brakePedalForce"))
	case "engine":
		s.Set("engineState", self.G("engine_state"))
	default:
		s.Set("error", "Invalid option")
	}
	return s, nil
}

func vcParkingBrake(self, a *Dict) (any, error) {
	switch a.G("mode") {
	case "engage":
		self.Set("parkingBrakeStatus", "engaged")
		self.Set("_parkingBrakeForce", 500.0)
		self.Set("_slopeAngle", 10.0)
		return dict("parkingBrakeStatus", "engaged", "_parkingBrakeForce", 500.0, "_slopeAngle", 10.0), nil
	case "release":
		self.Set("parkingBrakeStatus", "released")
		self.Set("_parkingBrakeForce", 0.0)
		self.Set("_slopeAngle", 10.0)
		return dict("parkingBrakeStatus", "released", "_parkingBrakeForce", 0.0, "_slopeAngle", 10.0), nil
	}
	return dict("error", "Invalid mode"), nil
}

func vcPressBrake(self, a *Dict) (any, error) {
	p, _ := toNum(a.G("pedalPosition"))
	if !(0 <= p.f && p.f <= 1) {
		return dict("error", "Pedal position must be between 0 and 1."), nil
	}
	if p.f == 0 {
		self.Set("brakePedalStatus", "released")
		self.Set("_brakePedalForce", 0.0)
		return dict("brakePedalStatus", "released", "brakePedalForce", 0.0), nil
	}
	var force any = p.f * 1000
	if p.isInt {
		force = p.i * 1000
	}
	self.Set("brakePedalStatus", "pressed")
	self.Set("_brakePedalForce", force)
	return dict("brakePedalStatus", "pressed", "brakePedalForce", p.f*1000), nil
}

func vcReleaseBrake(self, _ *Dict) (any, error) {
	self.Set("brakePedalStatus", "released")
	self.Set("_brakePedalForce", 0.0)
	return dict("brakePedalStatus", "released", "brakePedalForce", 0.0), nil
}

func vcCruise(self, a *Dict) (any, error) {
	dist, ok1 := num(a.G("distanceToNextVehicle"))
	speed, ok2 := num(a.G("speed"))
	if !ok1 || !ok2 {
		return nil, raise("could not convert to float")
	}
	if self.G("engine_state") == "stopped" {
		return dict("error", "Start the engine before activating the cruise control."), nil
	}
	self.Set("distanceToNextVehicle", dist)
	if truthy(a.G("activate")) {
		if speed < 0 || speed > 120 || math.Mod(speed, 5) != 0 {
			return dict("error", "Invalid speed"), nil
		}
		self.Set("cruiseStatus", "active")
		return dict("cruiseStatus", "active", "currentSpeed", speed, "distanceToNextVehicle", dist), nil
	}
	self.Set("cruiseStatus", "inactive")
	return dict("cruiseStatus", "inactive", "currentSpeed", speed, "distanceToNextVehicle", dist), nil
}

func vcFeasible(self, a *Dict) (any, error) {
	f, _ := num(self.G("fuelLevel"))
	d, _ := num(a.G("distance"))
	return dict("canDrive", !(f*20.0 < d)), nil
}

var vcDistances = map[[2]string]float64{
	{"83214", "74532"}: 750, {"56108", "62947"}: 320, {"71354", "83462"}: 450, {"47329", "52013"}: 290,
	{"69238", "51479"}: 630, {"94016", "83214"}: 980, {"94016", "94704"}: 600, {"94704", "08540"}: 2550,
	{"94016", "08540"}: 1950, {"62947", "47329"}: 1053, {"94016", "62947"}: 780, {"74532", "94016"}: 880,
}

func vcDistance(_, a *Dict) (any, error) {
	x, _ := str(a.G("cityA"))
	y, _ := str(a.G("cityB"))
	if d, ok := vcDistances[[2]string{x, y}]; ok {
		return dict("distance", d), nil
	}
	if d, ok := vcDistances[[2]string{y, x}]; ok {
		return dict("distance", d), nil
	}
	return dict("error", "distance not found in database."), nil
}

var vcZips = map[string]string{
	"Rivermist": "83214", "Stonebrook": "74532", "Maplecrest": "56108", "Silverpine": "62947", "Shadowridge": "71354",
	"Sunset Valley": "83462", "Oakendale": "47329", "Willowbend": "52013", "Crescent Hollow": "69238",
	"Autumnville": "51479", "San Francisco": "94016",
}

func vcZip(_, a *Dict) (any, error) {
	c, _ := str(a.G("city"))
	if z, ok := vcZips[c]; ok {
		return dict("zipcode", z), nil
	}
	return dict("zipcode", "00000"), nil
}

func vcNavigate(self, a *Dict) (any, error) {
	d, ok := str(a.G("destination"))
	if !ok {
		return nil, raise("can only concatenate str")
	}
	self.Set("destination", d)
	return dict("status", "Navigating to "+d), nil
}

func vcTires(self, _ *Dict) (any, error) {
	var sum float64
	for _, k := range []string{"frontLeftTirePressure", "frontRightTirePressure", "rearLeftTirePressure", "rearRightTirePressure"} {
		f, _ := num(self.G(k))
		sum += f
	}
	avg := sum / 4
	return dict("frontLeftTirePressure", self.G("frontLeftTirePressure"), "frontRightTirePressure", self.G("frontRightTirePressure"),
		"rearLeftTirePressure", self.G("rearLeftTirePressure"), "rearRightTirePressure", self.G("rearRightTirePressure"),
		"healthy_tire_pressure", 30 <= avg && avg <= 35, "car_info", newDict()), nil
}
