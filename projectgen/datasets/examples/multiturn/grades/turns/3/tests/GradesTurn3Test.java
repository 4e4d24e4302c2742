import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

public class GradesTurn3Test {

    @Test
    public void theAverageIsRoundedHalfUp() {
        assertThat(Grades.average(89, 90)).isEqualTo("A");
        assertThat(Grades.average(80, 79)).isEqualTo("B");
        assertThat(Grades.average(60)).isEqualTo("F");
    }

    @Test
    public void noScoresIsRefused() {
        assertThatThrownBy(() -> Grades.average()).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    public void eachScoreIsChecked() {
        assertThatThrownBy(() -> Grades.average(90, 120)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    public void letterStillRefusesOutOfRange() {
        assertThatThrownBy(() -> Grades.letter(-5)).isInstanceOf(IllegalArgumentException.class);
    }
}
